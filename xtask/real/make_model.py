"""The real-engine tier's models (cargo xtask real): tiny random Llamas and word-level
tokenizers, built here because the machine reaches no model hub.

Deterministic: fixed seed, fixed vocabulary (two runs give byte-identical files). Writes:
  tiny-llama      hidden 128, 2 heads  -> head_dim 64 (works with the CPU attention kernel)
  tiny-llama-h16  hidden 32,  2 heads  -> head_dim 16 (the server starts; its first request
                  crashes the engine: the CPU kernel refuses head size 16)
Usage: VENV/bin/python make_model.py OUTDIR
"""
import os, sys
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, decoders
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
VOCAB = 4096
SPECIALS = ["<unk>", "<s>", "</s>", "<pad>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def make_tokenizer(path):
    words = SPECIALS + [f"w{i}" for i in range(VOCAB - len(SPECIALS) - 64)]
    # a few real words so benchmark text / chat roles tokenize to something
    words += ["user:", "assistant:", "system:", "the", "a", "of", "and", "to", "in", "is",
              "hello", "world", "model", "test", "token"]
    words = words[:VOCAB]
    words += [f"x{i}" for i in range(VOCAB - len(words))]
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins tokens with spaces
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
        pad_token="<pad>", model_max_length=1024,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    return fast


def make_model(path, hidden, inter, heads):
    torch.manual_seed(1234)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=hidden, intermediate_size=inter,
        num_hidden_layers=2, num_attention_heads=heads, num_key_value_heads=heads,
        max_position_embeddings=1024, bos_token_id=1, eos_token_id=2, pad_token_id=3,
        tie_word_embeddings=False, torch_dtype="bfloat16",
    )
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(path, safe_serialization=True)
    make_tokenizer(path)
    print(f"{path}: head_dim={hidden // heads} params={sum(p.numel() for p in model.parameters())}")


if __name__ == "__main__":
    make_model(os.path.join(OUT, "tiny-llama"), hidden=128, inter=256, heads=2)
    make_model(os.path.join(OUT, "tiny-llama-h16"), hidden=32, inter=64, heads=2)

"""Build a tiny word-level tokenizer usable by GuideLLM and AIPerf without a hub
(`cargo xtask loadtools`: `python make_tokenizer.py OUT_DIR`, with the tier's venv).

Tokens are whitespace-separated words (WhitespaceSplit), so a prompt of N tokens
is N words -- exactly how inferlint-enginesim counts prompt tokens.  The vocabulary
is trained on the texts the two tools synthesise prompts from: AIPerf's
shakespeare.txt corpus and a sample of Faker lorem text (GuideLLM's synthetic
source), plus numbers and the enginesim's output words, so that decode->encode
round-trips without [UNK].
"""
import os
import sys

from faker import Faker
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

if len(sys.argv) != 2:
    sys.exit("usage: make_tokenizer.py OUT_DIR")
OUT = sys.argv[1]
VOCAB = int(os.environ.get("TOK_VOCAB", "8192"))
import aiperf

shakespeare = os.path.join(os.path.dirname(aiperf.__file__),
                           "dataset/generator/assets/shakespeare.txt")

fk = Faker()
fk.seed_instance(0)
faker_text = [fk.text(max_nb_chars=2000) for _ in range(300)]
extra = [str(i) for i in range(1000)] + [f"m{i}" for i in range(10)] + \
        ["the", "of", "and", "to", "a", "in", "is", "it", "that", "on"]

specials = ["[UNK]", "[BOS]", "[EOS]", "[PAD]"]
tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins with single spaces


def corpus():
    with open(shakespeare, encoding="utf-8") as f:
        for line in f:
            yield line
    for t in faker_text:
        yield t


# Faker words must never be dropped by the size cap: give them high frequency.
trainer = trainers.WordLevelTrainer(vocab_size=VOCAB, special_tokens=specials)
tok.train_from_iterator(list(corpus()) + faker_text * 50 + [" ".join(extra)] * 1000,
                        trainer=trainer)

fast = PreTrainedTokenizerFast(
    tokenizer_object=tok,
    unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]", pad_token="[PAD]",
    model_max_length=16384,
)
# A trivial chat template, in case a tool asks the processor to apply one.
fast.chat_template = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
fast.save_pretrained(OUT)

# Self-check: round trips and token counts.
from transformers import AutoTokenizer
t2 = AutoTokenizer.from_pretrained(OUT)
s = fk.text(max_nb_chars=600)
ids = t2.encode(s, add_special_tokens=False)
back = t2.decode(ids, skip_special_tokens=True)
unk = sum(1 for i in ids if i == t2.unk_token_id)
print(f"vocab={t2.vocab_size} class={type(t2).__name__} words={len(s.split())} "
      f"ids={len(ids)} unk={unk} roundtrip_equal={back == ' '.join(s.split())}")

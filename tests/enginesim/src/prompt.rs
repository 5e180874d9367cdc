//! What a request's prompt costs in tokens, and the token ids the tokenizer endpoints
//! show for it. One rule serves the completions, `/tokenize` and the render endpoints,
//! so `usage.prompt_tokens`, `/tokenize`'s `count` and the engine's prompt counters agree.
//!
//! The rule: one token per whitespace-separated word (the local test tokenizers split
//! the same way, so a client counting with them agrees with the server). A chat request
//! is laid out as the ChatML template of the simulated models (Qwen3) lays it out:
//!
//! ```text
//! <|im_start|>{role}\n{content}<|im_end|>\n      per message: 5 tokens + content words
//! <|im_start|>assistant\n                           generation prompt: 3 tokens
//! ```
//!
//! so one user message of N words costs N + 8 tokens, as Qwen3's tokenizer counts it
//! (role names and `\n` are one token each there). For 88-word prompts that is 9.1%
//! above the bare text, under the 10% at which AIPerf warns of a usage discrepancy.
//! Text parts of a list-valued `content` are joined, as vLLM does for string-format
//! templates; other parts (images, audio) cost nothing here.

use std::collections::HashMap;

use serde_json::Value;

/// Qwen2/3 ids of the template's special tokens and newline.
const IM_START: u32 = 151_644;
const IM_END: u32 = 151_645;
const NEWLINE: u32 = 198;
/// Words get ids from here on, in order of first sight.
const FIRST_WORD_ID: u32 = 1_000;
/// Stop learning new words past this many (ids then come from a hash and cannot be
/// turned back into text), so a long run cannot grow the table without bound.
const MAX_WORDS: usize = 1 << 20;

/// One token of a laid-out prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    Special(u32),
    Word(&'a str),
    /// A token id the client sent as such.
    Id(u32),
}

/// How a chat is turned into a prompt (the OpenAI request's template switches).
#[derive(Debug, Clone, Copy)]
pub struct ChatLayout {
    pub add_generation_prompt: bool,
    /// The last message stays open (no end marker) for the model to continue it.
    pub continue_final_message: bool,
}

impl ChatLayout {
    /// The switches as a chat or tokenize request gives them (vLLM's defaults).
    pub fn from_request(body: &Value) -> ChatLayout {
        let flag = |k: &str, d: bool| body.get(k).and_then(Value::as_bool).unwrap_or(d);
        let continue_final_message = flag("continue_final_message", false);
        ChatLayout {
            add_generation_prompt: flag("add_generation_prompt", !continue_final_message),
            continue_final_message,
        }
    }
}

/// The text of a message's `content`: a string, or the text parts of a list.
fn content_texts(content: Option<&Value>) -> Vec<&str> {
    match content {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(_) if p.get("type").and_then(Value::as_str) == Some("text") => {
                    p.get("text").and_then(Value::as_str)
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A chat's `messages` laid out as the template does.
pub fn chat_pieces(messages: &Value, layout: ChatLayout) -> Vec<Piece<'_>> {
    let msgs: &[Value] = messages.as_array().map(Vec::as_slice).unwrap_or(&[]);
    let mut out = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        out.extend([
            Piece::Special(IM_START),
            Piece::Word(role),
            Piece::Special(NEWLINE),
        ]);
        for text in content_texts(m.get("content")) {
            out.extend(text.split_whitespace().map(Piece::Word));
        }
        let open = layout.continue_final_message && i + 1 == msgs.len();
        if !open {
            out.extend([Piece::Special(IM_END), Piece::Special(NEWLINE)]);
        }
    }
    if layout.add_generation_prompt && !layout.continue_final_message {
        out.extend([
            Piece::Special(IM_START),
            Piece::Word("assistant"),
            Piece::Special(NEWLINE),
        ]);
    }
    out
}

/// A completion's `prompt`: a string, a list of token ids, or a batch of either (the
/// simulator serves the first of a batch).
pub fn completion_pieces(prompt: &Value) -> Vec<Piece<'_>> {
    match prompt {
        Value::String(s) => s.split_whitespace().map(Piece::Word).collect(),
        Value::Array(a) if a.iter().all(Value::is_number) => a
            .iter()
            .map(|n| Piece::Id(n.as_u64().unwrap_or(0) as u32))
            .collect(),
        Value::Array(a) => a.first().map(completion_pieces).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Tokens the engine computes for a prompt: never fewer than one (an empty prompt
/// still holds a slot and a block).
pub fn cost(pieces: &[Piece]) -> usize {
    pieces.len().max(1)
}

/// The prompt's full blocks of `block` tokens, each by a hash chained over everything
/// before it, so two prompts share a block's hash only when they agree up to its end
/// (the prefix cache's key, as vLLM's block hashes are).
pub fn block_hashes(pieces: &[Piece], block: usize) -> Vec<u64> {
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0100_0000_01b3;
    let mix = |h: u64, x: u64| (h ^ x).wrapping_mul(FNV_PRIME);
    let token = |p: &Piece| -> u64 {
        match p {
            Piece::Special(id) | Piece::Id(id) => u64::from(*id) | 1 << 63,
            Piece::Word(w) => w.bytes().fold(FNV_OFFSET, |h, b| mix(h, u64::from(b))),
        }
    };
    let block = block.max(1);
    let mut h = FNV_OFFSET;
    pieces
        .chunks_exact(block)
        .map(|c| {
            h = c.iter().fold(h, |h, p| mix(h, token(p)));
            h
        })
        .collect()
}

/// Word ↔ id table behind `/tokenize` and `/detokenize`: ids are handed out in order
/// of first sight, so the same word always gets the same id in one server's life.
#[derive(Debug, Default)]
pub struct Vocab {
    ids: HashMap<String, u32>,
    words: Vec<String>,
}

impl Vocab {
    fn word_id(&mut self, w: &str) -> u32 {
        if let Some(id) = self.ids.get(w) {
            return *id;
        }
        if self.words.len() >= MAX_WORDS {
            // Full: a stable id that is not in the table.
            let h = w.bytes().fold(2_166_136_261u32, |h, b| {
                (h ^ b as u32).wrapping_mul(16_777_619)
            });
            return FIRST_WORD_ID + MAX_WORDS as u32 + h % 100_000;
        }
        let id = FIRST_WORD_ID + self.words.len() as u32;
        self.words.push(w.to_string());
        self.ids.insert(w.to_string(), id);
        id
    }

    pub fn ids(&mut self, pieces: &[Piece]) -> Vec<u32> {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Special(id) | Piece::Id(id) => *id,
                Piece::Word(w) => self.word_id(w),
            })
            .collect()
    }

    /// The token's text as the tokenizer would show it (`token_strs`).
    pub fn token_str(&self, id: u32) -> String {
        match id {
            IM_START => "<|im_start|>".into(),
            IM_END => "<|im_end|>".into(),
            NEWLINE => "Ċ".into(),
            _ => match id.checked_sub(FIRST_WORD_ID) {
                Some(i) if (i as usize) < self.words.len() => self.words[i as usize].clone(),
                _ => "<unk>".into(),
            },
        }
    }

    /// Ids back to text: words joined by spaces, the template's markers verbatim.
    pub fn decode(&self, ids: &[u32]) -> String {
        let mut out = String::new();
        let mut after_word = false;
        for &id in ids {
            match id {
                NEWLINE => out.push('\n'),
                IM_START | IM_END => out.push_str(&self.token_str(id)),
                _ => {
                    if after_word {
                        out.push(' ');
                    }
                    out.push_str(&self.token_str(id));
                }
            }
            after_word = !matches!(id, NEWLINE | IM_START | IM_END);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CHAT: ChatLayout = ChatLayout {
        add_generation_prompt: true,
        continue_final_message: false,
    };

    #[test]
    fn a_user_message_costs_its_words_plus_eight() {
        let m = json!([{"role": "user", "content": "one two three"}]);
        assert_eq!(cost(&chat_pieces(&m, CHAT)), 3 + 8);
    }

    #[test]
    fn list_content_counts_every_text_part() {
        let m = json!([{"role": "user", "content": [
            {"type": "text", "text": "one two"},
            {"type": "image_url", "image_url": {"url": "x"}},
            {"type": "text", "text": "three four five"}]}]);
        assert_eq!(cost(&chat_pieces(&m, CHAT)), 5 + 8);
    }

    #[test]
    fn a_continued_message_stays_open() {
        let m = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b c"}]);
        let open = ChatLayout::from_request(&json!({"continue_final_message": true}));
        // user: 5 + 1; assistant: 3 + 2, no end marker, no generation prompt.
        assert_eq!(cost(&chat_pieces(&m, open)), 6 + 5);
    }

    #[test]
    fn completion_prompts_of_text_ids_and_batches() {
        assert_eq!(cost(&completion_pieces(&json!("a b  c\nd"))), 4);
        assert_eq!(cost(&completion_pieces(&json!([5, 6, 7]))), 3);
        assert_eq!(cost(&completion_pieces(&json!(["a b", "c"]))), 2);
        assert_eq!(cost(&completion_pieces(&json!(""))), 1);
    }

    #[test]
    fn block_hashes_are_chained_over_full_blocks() {
        let (ja, jb, jc) = (
            json!("a b c d e f g"),
            json!("a b c d x f g"),
            json!("z b c d e f g"),
        );
        let a = completion_pieces(&ja);
        let b = completion_pieces(&jb);
        let (ha, hb) = (block_hashes(&a, 2), block_hashes(&b, 2));
        assert_eq!(ha.len(), 3, "the last token is no full block");
        assert_eq!(ha[..2], hb[..2]);
        assert_ne!(ha[2], hb[2]);
        // A later block differs once an earlier one did, even with the same tokens.
        let c = completion_pieces(&jc);
        assert_ne!(block_hashes(&c, 2)[1], ha[1]);
    }

    #[test]
    fn ids_round_trip_through_the_vocab() {
        let mut v = Vocab::default();
        let m = json!([{"role": "user", "content": "hello world"}]);
        let ids = v.ids(&chat_pieces(&m, CHAT));
        assert_eq!(ids[0], IM_START);
        assert_eq!(
            v.decode(&ids),
            "<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\n"
        );
        let again = v.ids(&completion_pieces(&json!("world hello")));
        assert_eq!(again, vec![ids[4], ids[3]]);
    }
}

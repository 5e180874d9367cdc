//! How long the load asked each answer to be (T21): from the load tool's result where it
//! says (SGLang's `random_output_len`, GuideLLM's `output_tokens`, AIPerf's `osl`), else
//! from the load command the recorder ran (`--random-output-len`, `--output-tokens-mean`,
//! …). `vllm bench serve` writes no asked length into its result, so its command decides.
//!
//! A length is fixed when every request asked the same: vLLM's random dataset with
//! `--random-range-ratio 0` (its lengths are spread over `len·(1±r)`), SGLang's and
//! TensorRT-LLM's scripts with a range ratio of 1 (theirs over `[len·r, len]`), GuideLLM
//! and AIPerf without a spread. Only then can the answers' mean be held to it.

use serde::Serialize;

use super::argv::{flag_value, flag_values, has_flag, option_key, split_commands};
use super::gated::at;
use crate::docs::manifest::Client;
use crate::json::Json;
use crate::manifest::Manifest;

/// The output length the load asked of each answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskedOutput {
    /// Tokens asked of each answer (the middle of the spread when lengths vary).
    pub tokens: i64,
    /// Every request asked this same length.
    pub fixed: bool,
    /// The load told the server to run past end-of-sequence (`ignore_eos`); none when
    /// neither its command nor its result says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignore_eos: Option<bool>,
    /// Where it was read, for messages (`--random-output-len 100`).
    pub source: String,
}

/// What the load command the recorder ran asked for: the command that saved `file`
/// when there were several, else the only one.
pub fn from_manifest(m: &Manifest, file: Option<&str>) -> Option<AskedOutput> {
    if !m.load_runs.is_empty() {
        let run = m
            .load_runs
            .iter()
            .find(|r| file.is_some() && r.result_file.as_deref() == file)?;
        return from_argv(run.client?, &run.argv);
    }
    match split_commands(&m.load_argv).as_slice() {
        [one] => from_argv(m.load_client?, one),
        _ => None,
    }
}

/// Gives a result what the recorder's record of its command asked, where the result
/// itself does not say; its phases take the result's.
pub fn fill(result: &mut super::BenchResult, recorded: Option<AskedOutput>) {
    if result.asked_output.is_none() {
        result.asked_output = recorded;
    }
    for p in &mut result.phases {
        if p.asked_output.is_none() {
            p.asked_output.clone_from(&result.asked_output);
        }
    }
}

/// A whole positive count.
fn count(v: &str) -> Option<i64> {
    v.trim().parse::<i64>().ok().filter(|&n| n > 0)
}

fn number(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

/// From a load command (one, without `--then`) of a recognised client.
pub fn from_argv(client: Client, argv: &[String]) -> Option<AskedOutput> {
    match client {
        Client::Vllm => vllm_command(argv),
        Client::Sglang | Client::Trtllm => script_command(client, argv),
        Client::Guidellm => guidellm_command(argv),
        Client::Aiperf => aiperf_command(argv),
    }
}

/// `vllm bench serve`: `--output-len`, else the dataset's own flag
/// (`--random-output-len`, `--sharegpt-output-len`, …). The dataset's default length
/// depends on the release, so a command that names none asks for no known length.
fn vllm_command(argv: &[String]) -> Option<AskedOutput> {
    let dataset = flag_value(argv, "--dataset-name").unwrap_or("random");
    let own = format!("--{dataset}-output-len");
    let (flag, value) = ["--output-len", own.as_str()]
        .into_iter()
        .find_map(|f| Some((f, flag_value(argv, f)?)))?;
    let tokens = count(value)?;
    // A spread `r` (or `{"output": r}`) asks lengths over len·(1±r).
    let spread = match flag_value(argv, "--random-range-ratio") {
        None => Some(0.0),
        Some(r) if dataset == "random" => ratio_of(r),
        Some(_) => Some(0.0),
    };
    Some(AskedOutput {
        tokens,
        fixed: spread == Some(0.0),
        ignore_eos: has_flag(argv, "--ignore-eos").then_some(true),
        source: format!("{flag} {tokens} in the load command"),
    })
}

/// `--random-range-ratio` as vLLM reads it: one number, or a JSON object's `output`.
fn ratio_of(v: &str) -> Option<f64> {
    number(v).or_else(|| {
        let j = crate::json::parse(v).ok()?;
        j.get("output").and_then(Json::as_f64)
    })
}

/// SGLang's `bench_serving` and TensorRT-LLM's `benchmark_serving`: lengths over
/// `[len·r, len]`, fixed only with a range ratio of 1. SGLang ignores end-of-sequence
/// unless `--disable-ignore-eos`.
fn script_command(client: Client, argv: &[String]) -> Option<AskedOutput> {
    let dataset = flag_value(argv, "--dataset-name").unwrap_or("sharegpt");
    let flag = if dataset.starts_with("random") {
        "--random-output-len"
    } else {
        "--sharegpt-output-len"
    };
    let tokens = count(flag_value(argv, flag)?)?;
    // SGLang's default ratio is 0: lengths anywhere up to the one named.
    let default = (client == Client::Sglang).then_some(0.0);
    let ratio = flag_value(argv, "--random-range-ratio")
        .and_then(number)
        .or(default);
    let fixed = !flag.starts_with("--random") || ratio == Some(1.0);
    let ignore_eos = match client {
        Client::Sglang => Some(!has_flag(argv, "--disable-ignore-eos")),
        _ => has_flag(argv, "--ignore-eos").then_some(true),
    };
    Some(AskedOutput {
        tokens: spread_middle(tokens, ratio.filter(|_| !fixed)),
        fixed,
        ignore_eos,
        source: format!("{flag} {tokens} in the load command"),
    })
}

/// The middle of `[len·r, len]`.
fn spread_middle(tokens: i64, ratio: Option<f64>) -> i64 {
    ratio.map_or(tokens, |r| (tokens as f64 * (1.0 + r) / 2.0).round() as i64)
}

/// `guidellm run --data kind=synthetic_text,output_tokens=N` (or `--data
/// output_tokens=N`): a spread (`output_tokens_stdev`, `_min`, `_max`) makes it vary.
/// GuideLLM sends `ignore_eos` with an asked length.
fn guidellm_command(argv: &[String]) -> Option<AskedOutput> {
    flag_values(argv, "--data").into_iter().find_map(|d| {
        let tokens = count(option_key(d, "output_tokens")?)?;
        let spread = [
            "output_tokens_stdev",
            "output_tokens_min",
            "output_tokens_max",
        ]
        .iter()
        .any(|k| option_key(d, k).is_some());
        Some(AskedOutput {
            tokens,
            fixed: !spread,
            ignore_eos: Some(true),
            source: format!("output_tokens={tokens} in the load command"),
        })
    })
}

/// `aiperf profile --output-tokens-mean N` (or `--osl N`), fixed unless
/// `--output-tokens-stddev` is above 0; `--extra-inputs ignore_eos:true` ignores
/// end-of-sequence.
fn aiperf_command(argv: &[String]) -> Option<AskedOutput> {
    let (flag, tokens) = ["--output-tokens-mean", "--osl"]
        .into_iter()
        .find_map(|f| Some((f, count(flag_value(argv, f)?)?)))?;
    let stddev = flag_value(argv, "--output-tokens-stddev").and_then(number);
    let eos = flag_values(argv, "--extra-inputs")
        .iter()
        .any(|v| v.replace(' ', "").eq_ignore_ascii_case("ignore_eos:true"));
    Some(AskedOutput {
        tokens,
        fixed: stddev.is_none_or(|s| s == 0.0),
        ignore_eos: eos.then_some(true),
        source: format!("{flag} {tokens} in the load command"),
    })
}

/// SGLang's result names its dataset and lengths (`random_output_len`,
/// `random_range_ratio`, `sharegpt_output_len`).
pub fn from_sglang_result(v: &Json) -> Option<AskedOutput> {
    let dataset = v.get("dataset_name").and_then(Json::as_str)?;
    let key = if dataset.starts_with("random") {
        "random_output_len"
    } else {
        "sharegpt_output_len"
    };
    let tokens = v.get(key).and_then(Json::as_i64_trunc).filter(|&n| n > 0)?;
    let ratio = v.get("random_range_ratio").and_then(Json::as_f64);
    let fixed = key == "sharegpt_output_len" || ratio == Some(1.0);
    Some(AskedOutput {
        tokens: spread_middle(tokens, ratio.filter(|_| !fixed)),
        fixed,
        ignore_eos: None,
        source: format!("{key} = {tokens} in the result"),
    })
}

/// GuideLLM's report: `config.spec.data[0]` holds the synthetic data's lengths.
pub fn from_guidellm_result(v: &Json) -> Option<AskedOutput> {
    let data = at(v, &["config", "spec", "data"])?.as_array()?.first()?;
    let tokens = data
        .get("output_tokens")
        .and_then(Json::as_i64_trunc)
        .filter(|&n| n > 0)?;
    let spread = [
        "output_tokens_stdev",
        "output_tokens_min",
        "output_tokens_max",
    ]
    .iter()
    .any(|k| data.get(k).is_some_and(|x| !x.is_null()));
    Some(AskedOutput {
        tokens,
        fixed: !spread,
        ignore_eos: Some(true),
        source: format!("output_tokens = {tokens} in the result"),
    })
}

/// AIPerf's summary: `input_config.datasets[0].prompts.osl` (`mean`, `stddev`).
pub fn from_aiperf_result(v: &Json) -> Option<AskedOutput> {
    let datasets = at(v, &["input_config", "datasets"])?.as_array()?;
    let osl = at(datasets.first()?, &["prompts", "osl"])?;
    let mean = osl.get("mean").and_then(Json::as_f64)?;
    let tokens = (mean.is_finite() && mean >= 1.0).then(|| mean.round() as i64)?;
    let stddev = osl.get("stddev").and_then(Json::as_f64);
    Some(AskedOutput {
        tokens,
        fixed: stddev.is_none_or(|s| s == 0.0) && mean.fract() == 0.0,
        ignore_eos: None,
        source: format!("osl = {tokens} in the result"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn vllm_bench_serve() {
        let a = from_argv(
            Client::Vllm,
            &v("vllm bench serve --dataset-name random --random-output-len 100 --ignore-eos"),
        )
        .unwrap();
        assert_eq!((a.tokens, a.fixed, a.ignore_eos), (100, true, Some(true)));
        assert_eq!(a.source, "--random-output-len 100 in the load command");
        let a = from_argv(Client::Vllm, &v("vllm bench serve --output-len=64")).unwrap();
        assert_eq!((a.tokens, a.ignore_eos), (64, None));
        let spread = v("vllm bench serve --random-output-len 100 --random-range-ratio 0.5");
        assert!(!from_argv(Client::Vllm, &spread).unwrap().fixed);
        let json =
            v(r#"vllm bench serve --random-output-len 100 --random-range-ratio {"output":0}"#);
        assert!(from_argv(Client::Vllm, &json).unwrap().fixed);
        // No length named: the dataset's default is the release's, unknown here.
        assert_eq!(from_argv(Client::Vllm, &v("vllm bench serve")), None);
        let sg = v("vllm bench serve --dataset-name sharegpt --sharegpt-output-len 7");
        assert_eq!(from_argv(Client::Vllm, &sg).unwrap().tokens, 7);
    }

    #[test]
    fn the_scripts_guidellm_and_aiperf() {
        let s = v("python -m sglang.bench_serving --dataset-name random --random-output-len 1000 --random-range-ratio 1");
        let a = from_argv(Client::Sglang, &s).unwrap();
        assert_eq!((a.tokens, a.fixed, a.ignore_eos), (1000, true, Some(true)));
        let s = v("python -m sglang.bench_serving --dataset-name random --random-output-len 1000 --disable-ignore-eos");
        let a = from_argv(Client::Sglang, &s).unwrap();
        assert_eq!((a.tokens, a.fixed, a.ignore_eos), (500, false, Some(false)));
        let g = v("guidellm run --data kind=synthetic_text,prompt_tokens=88,output_tokens=50");
        let a = from_argv(Client::Guidellm, &g).unwrap();
        assert_eq!((a.tokens, a.fixed), (50, true));
        let g = v("guidellm run --data prompt_tokens=88,output_tokens=50,output_tokens_stdev=5");
        assert!(!from_argv(Client::Guidellm, &g).unwrap().fixed);
        let p = v("aiperf profile --osl 100 --extra-inputs ignore_eos:true");
        let a = from_argv(Client::Aiperf, &p).unwrap();
        assert_eq!((a.tokens, a.fixed, a.ignore_eos), (100, true, Some(true)));
        let p = v("aiperf profile --output-tokens-mean 100 --output-tokens-stddev 10");
        assert!(!from_argv(Client::Aiperf, &p).unwrap().fixed);
        assert_eq!(from_argv(Client::Aiperf, &v("aiperf profile")), None);
    }

    #[test]
    fn from_results() {
        let j = |t: &str| crate::json::parse(t).unwrap();
        let a = from_sglang_result(&j(
            r#"{"dataset_name": "random-ids", "random_output_len": 1000, "random_range_ratio": 1.0}"#,
        ))
        .unwrap();
        assert_eq!((a.tokens, a.fixed), (1000, true));
        let a = from_guidellm_result(&j(
            r#"{"config": {"spec": {"data": [{"output_tokens": 50, "output_tokens_stdev": null}]}}}"#,
        ))
        .unwrap();
        assert_eq!((a.tokens, a.fixed, a.ignore_eos), (50, true, Some(true)));
        let a = from_aiperf_result(&j(
            r#"{"input_config": {"datasets": [{"prompts": {"osl": {"mean": 100.0}}}]}}"#,
        ))
        .unwrap();
        assert_eq!((a.tokens, a.fixed), (100, true));
        assert_eq!(
            from_sglang_result(&j(r#"{"dataset_name": "random"}"#)),
            None
        );
    }
}

#!/usr/bin/env python3
"""The project's corrupted-input trial (issue 11), beside the shared one
(../shared/tools/bad-input, random damage): each case here is one hostile change to a copy
of a recorded run folder, or one hostile flag, with the outcome it must give. Besides the
shared trial's rule (no panic, no signal, a message on exit 2), every case checks that
nothing outside the run folder was touched and that no earlier output was lost.

usage: tests/trials/bad_input.py PATH/TO/inferlint PATH/TO/inferlint-recorder FIXTURES
  FIXTURES: the project's fixtures/recorded (vllm/, sglang/, trtllm/, vllm-t16-t18/)
"""
import json, os, resource, shutil, signal, socket, subprocess, sys, tempfile, time

inferlint, recorder, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
work = tempfile.mkdtemp(prefix="inferlint-trial-")
env = dict(os.environ, NO_COLOR="1")
env.pop("INFERLINT_ENGINE", None)
cases, failures = [], []


def case(name):
    def wrap(f):
        cases.append((name, f))
        return f
    return wrap


def fresh(engine="vllm"):
    """A copy of a recorded run in its own scratch folder, with a sentinel beside it."""
    base = tempfile.mkdtemp(dir=work)
    run = os.path.join(base, "run")
    shutil.copytree(os.path.join(fixtures, engine), run)
    with open(os.path.join(base, "sentinel.txt"), "w") as f:
        f.write("precious")
    return base, run


def analyze(run, *extra, timeout=60):
    r = subprocess.run([inferlint, "analyze", run, *extra], capture_output=True,
                       timeout=timeout, env=env)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def analyze_json(run, *extra):
    code, out, err = analyze(run, "--json", *extra)
    return code, json.loads(out) if out.strip() else None, err


def check(doc, tid):
    return next(c for c in doc["checks"] if c["id"] == tid)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def untouched(base):
    """Nothing beside the run folder changed: the sentinel is whole, nothing new appeared."""
    with open(os.path.join(base, "sentinel.txt")) as f:
        expect(f.read() == "precious", "the file beside the run folder changed")
    extra = set(os.listdir(base)) - {"run", "sentinel.txt", "elsewhere", "links", "real-boot.log"}
    expect(not extra, f"written outside the run folder: {sorted(extra)}")


def not_pass(doc, tid, needle):
    c = check(doc, tid)
    expect(c["status"] == "unknown", f"{tid} is {c['status']}: {c['message']}")
    expect(needle in c["message"], f"{tid} message lacks {needle!r}: {c['message']}")


def replace_in(path, old, new, count=1):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    expect(old in text, f"{old!r} not in {path}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, count))


def snapshot_sample(path, metric):
    """The whole sample line of `metric` inside a snapshot's escaped text."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    at = text.index(metric + "{")
    return text[at:text.index("\\n", at)]


# --- outputs -------------------------------------------------------------------------

@case("results.json is a symlink to a file outside: refused, exit 2, target untouched")
def _():
    base, run = fresh()
    os.symlink(os.path.join(base, "sentinel.txt"), os.path.join(run, "results.json"))
    code, out, err = analyze(run)
    expect(code == 2 and "is a symbolic link" in err, f"exit {code}: {err}")
    untouched(base)


@case("report.html points into another folder: nothing created there, exit 2")
def _():
    base, run = fresh()
    os.mkdir(os.path.join(base, "elsewhere"))
    os.symlink(os.path.join(base, "elsewhere", "new.html"), os.path.join(run, "report.html"))
    code, out, err = analyze(run)
    expect(code == 2, f"exit {code}")
    expect(os.listdir(os.path.join(base, "elsewhere")) == [], "a file was created elsewhere")
    untouched(base)


@case("results.json is a folder: refused, exit 2")
def _():
    base, run = fresh()
    os.mkdir(os.path.join(run, "results.json"))
    code, out, err = analyze(run)
    expect(code == 2 and "not a regular file" in err, f"exit {code}: {err}")


@case("--html names an input (boot.log): refused before anything is written")
def _():
    base, run = fresh()
    log = os.path.join(run, "boot.log")
    before = open(log, "rb").read()
    code, out, err = analyze(run, "--html", log)
    expect(code == 2 and "an input of this analysis" in err, f"exit {code}: {err}")
    expect(open(log, "rb").read() == before, "boot.log changed")
    expect(not os.path.exists(os.path.join(run, "results.json")), "results.json written")


@case("--html names results.json of the same run: refused")
def _():
    base, run = fresh()
    code, _, _ = analyze(run)
    code, out, err = analyze(run, "--html", os.path.join(run, "results.json"))
    expect(code == 2 and "refusing to overwrite" in err, f"exit {code}: {err}")
    json.load(open(os.path.join(run, "results.json")))


@case("--html in a folder that does not exist: exit 2 with the reason")
def _():
    base, run = fresh()
    code, out, err = analyze(run, "--html", os.path.join(base, "no", "such", "r.html"))
    expect(code == 2 and "cannot write" in err, f"exit {code}: {err}")


@case("--html in a read-only folder: exit 2 (not a note with exit 0)")
def _():
    base, run = fresh()
    ro = os.path.join(base, "elsewhere")
    os.mkdir(ro)
    os.chmod(ro, 0o500)
    try:
        code, out, err = analyze(run, "--html", os.path.join(ro, "r.html"))
        # root ignores permissions: then the page is written, whole.
        if os.geteuid() == 0:
            expect(code in (0, 1, 2), f"exit {code}")
        else:
            expect(code == 2 and "cannot write" in err, f"exit {code}: {err}")
    finally:
        os.chmod(ro, 0o700)


def whole(name, data):
    """A complete output: results.json parses, report.html ends its document."""
    if name == "results.json":
        try:
            json.loads(data)
            return True
        except ValueError:
            return False
    return data.rstrip().endswith(b"</html>")


@case("SIGKILL while writing a large report: the previous outputs stay whole")
def _():
    base, run = fresh()
    # A long series makes the report large and the analysis slow enough to interrupt.
    series = os.path.join(run, "run.series.jsonl")
    lines = open(series, encoding="utf-8").read().splitlines()
    rows = lines[1:]
    t0 = json.loads(rows[0])["t_wall"]
    with open(series, "w", encoding="utf-8") as f:
        f.write(lines[0] + "\n")
        for k in range(400_000):
            r = json.loads(rows[k % len(rows)])
            r["t_wall"] = t0 + k * 0.25
            r.pop("t_mono_ns", None)
            f.write(json.dumps(r) + "\n")
    t = time.time()
    code, _, _ = analyze(run, timeout=300)
    full = time.time() - t
    old = {n: open(os.path.join(run, n), "rb").read() for n in ("results.json", "report.html")}
    # Kills spread over the end of a run, where the outputs are written.
    for delay in (full * f for f in (0.5, 0.7, 0.8, 0.88, 0.94, 0.98)):
        p = subprocess.Popen([inferlint, "analyze", run], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        # Each output is the old one, byte for byte, or a whole new one (a kill that
        # came after the rename): never cut. A new one differs only by its clock stamps.
        for n, b in old.items():
            now = open(os.path.join(run, n), "rb").read()
            expect(now == b or whole(n, now), f"{n} was cut after a kill at {delay}s")
    leftovers = [n for n in os.listdir(run) if n.endswith(".partial")]
    print(f"      ({len(leftovers)} kill(s) landed while an output was being written)")
    # A kill leaves its temporary file; the next run ignores it and writes whole outputs.
    code, out, err = analyze(run, timeout=300)
    expect(code in (0, 1, 2) and "partial" not in out, f"exit {code}: {err}")
    json.load(open(os.path.join(run, "results.json")))
    expect(open(os.path.join(run, "report.html"), "rb").read().rstrip().endswith(b"</html>"),
           "report.html is not whole")


# --- inputs --------------------------------------------------------------------------

@case("boot.log is a symlink: listed as skipped, its checks can't tell with the reason")
def _():
    base, run = fresh()
    real = os.path.join(base, "real-boot.log")
    os.rename(os.path.join(run, "boot.log"), real)
    os.symlink(real, os.path.join(run, "boot.log"))
    code, doc, err = analyze_json(run)
    expect("skipped boot.log: a symbolic link: not followed" in err, err)
    expect({"name": "boot.log", "reason": "a symbolic link: not followed"} in doc["skipped"],
           doc["skipped"])
    not_pass(doc, "T12", "a symbolic link: not followed")
    untouched(base)


@case("a folder of symlinks: each named, exit 2, not 'no run files'")
def _():
    base, run = fresh()
    links = os.path.join(base, "links")
    os.mkdir(links)
    for n in os.listdir(run):
        os.symlink(os.path.join(run, n), os.path.join(links, n))
    code, out, err = analyze(links)
    expect(code == 2 and "a symbolic link" in err and "no run files" not in err,
           f"exit {code}: {err}")


@case("boot.log is a folder: listed as skipped, T12 can't tell")
def _():
    base, run = fresh()
    os.remove(os.path.join(run, "boot.log"))
    os.mkdir(os.path.join(run, "boot.log"))
    code, doc, err = analyze_json(run)
    expect("skipped boot.log: a folder, not a file" in err, err)
    not_pass(doc, "T12", "a folder, not a file")


@case("boot.log is a FIFO: skipped at once, never waited on")
def _():
    base, run = fresh()
    os.remove(os.path.join(run, "boot.log"))
    os.mkfifo(os.path.join(run, "boot.log"))
    code, doc, err = analyze_json(run)
    expect("a device, FIFO or socket" in err, err)


@case("a socket in the run folder: listed as skipped")
def _():
    base, run = fresh()
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(run, "sock.json"))
    try:
        code, doc, err = analyze_json(run)
        expect(any(e["name"] == "sock.json" for e in doc["skipped"]), doc["skipped"])
    finally:
        s.close()


@case("a file name that is not UTF-8: listed as skipped")
def _():
    base, run = fresh()
    open(os.path.join(run.encode(), b"bad-\xff.json"), "w").close()
    code, doc, err = analyze_json(run)
    expect(any("not UTF-8" in e["reason"] for e in doc["skipped"]), doc["skipped"])


@case("a 2 GB sparse series: refused before reading, in seconds and little memory")
def _():
    base, run = fresh()
    with open(os.path.join(run, "run.series.jsonl"), "wb") as f:
        f.truncate(2 << 30)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.time()
    code, doc, err = analyze_json(run)
    took = time.time() - t
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    expect(took < 10, f"took {took:.1f}s")
    expect(rss_mb < 1024 or rss_mb == before / 1024, f"{rss_mb:.0f} MB")
    expect("sparse" in err or "not a series file" in err, err)
    not_pass(doc, "T9", "run.series.jsonl")


@case("a 65 MiB snapshot: refused by its size")
def _():
    base, run = fresh()
    with open(os.path.join(run, "before.snapshot.json"), "wb") as f:
        f.write(b"#" * (65 << 20))
    code, doc, err = analyze_json(run)
    expect("over the 64 MiB limit for a snapshot" in err, err)
    not_pass(doc, "T1", "64 MiB")


# --- numbers -------------------------------------------------------------------------

@case("a NaN preemption counter: T1 can't tell (never PASS), in the terminal and the Report")
def _():
    base, run = fresh()
    p = os.path.join(run, "after.snapshot.json")
    sample = snapshot_sample(p, "vllm:num_preemptions_total")
    replace_in(p, sample, sample.rsplit(" ", 1)[0] + " NaN")
    code, doc, err = analyze_json(run)
    not_pass(doc, "T1", "vllm:num_preemptions_total = NaN")
    code, out, err = analyze(run)
    expect("PASS" not in next(l for l in out.splitlines() if l.startswith("[ T1]")), out)


@case("a NaN token counter: T10 gives no 'nan tokens/s'")
def _():
    base, run = fresh()
    p = os.path.join(run, "after.snapshot.json")
    sample = snapshot_sample(p, "vllm:generation_tokens_total")
    replace_in(p, sample, sample.rsplit(" ", 1)[0] + " NaN")
    code, doc, err = analyze_json(run)
    not_pass(doc, "T10", "vllm:generation_tokens_total = NaN")
    expect("nan tokens" not in json.dumps(doc).lower(), "a NaN rate is shown")


@case("a snapshot's t_wall of 1e308: T10 can't tell")
def _():
    base, run = fresh()
    p = os.path.join(run, "after.snapshot.json")
    doc = json.load(open(p))
    doc["t_wall"] = 1e308
    doc["t_mono_ns"] = None
    json.dump(doc, open(p, "w"))
    code, out, err = analyze_json(run)
    not_pass(out, "T10", "t_wall = 1e308")


@case("kv_usage 1e308: T9 and T14 can't tell (no 'inf%' or '0 fit')")
def _():
    base, run = fresh()
    replace_in(os.path.join(run, "run.series.jsonl"), '"kv_usage": 0.09523809523809523',
               '"kv_usage": 1e308')
    code, doc, err = analyze_json(run)
    not_pass(doc, "T9", "kv_usage = 1e308")
    not_pass(doc, "T14", "kv_usage = 1e308")
    expect("inf%" not in json.dumps(doc), "inf% shown")


@case("one running reading of 1e9: T8 and T9 can't tell (no 'ran up to 1000000000')")
def _():
    base, run = fresh()
    replace_in(os.path.join(run, "run.series.jsonl"), '"running": 1.0', '"running": 1e9')
    code, doc, err = analyze_json(run, "--requested", "32")
    not_pass(doc, "T8", "running = 1000000000")
    not_pass(doc, "T9", "running = 1000000000")


@case("a running reading of -5: T8 can't tell (no 'never ran more than -5')")
def _():
    base, run = fresh()
    replace_in(os.path.join(run, "run.series.jsonl"), '"running": 1.0', '"running": -5.0')
    code, doc, err = analyze_json(run, "--requested", "32")
    not_pass(doc, "T8", "running = -5")


@case("a NaN waiting reading: T8 can't tell")
def _():
    base, run = fresh()
    replace_in(os.path.join(run, "run.series.jsonl"), '"waiting": 0.0', '"waiting": NaN')
    code, doc, err = analyze_json(run, "--requested", "32")
    not_pass(doc, "T8", "waiting = NaN")


@case("a paused gauge of Infinity (TensorRT-LLM): T1 from the gauge can't tell")
def _():
    base, run = fresh("trtllm")
    os.remove(os.path.join(run, "boot.log"))
    replace_in(os.path.join(run, "run.series.jsonl"), '"paused": 0.0', '"paused": Infinity')
    code, doc, err = analyze_json(run)
    not_pass(doc, "T1", "paused = inf")


@case("an integer beyond i64 in the load tool's result: T15 can't tell, never printed")
def _():
    base, run = fresh()
    p = os.path.join(run, "bench.json")
    text = open(p).read()
    import re
    text = re.sub(r'"completed":\s*\d+', '"completed":9223372036854775808', text, count=1)
    open(p, "w").write(text)
    code, doc, err = analyze_json(run)
    not_pass(doc, "T15", "completed = 9.223372036854776e18")
    expect("9,223,372,036,854,775,80" not in json.dumps(doc), "the saturated integer is shown")


def line_of(path, needle):
    """The 1-based line of the first occurrence of `needle` in a file."""
    with open(path, encoding="utf-8") as f:
        return next(i for i, l in enumerate(f, 1) if needle in l)


@case("a NaN prefix-cache counter: T17 can't tell (not PASS on a NaN share)")
def _():
    base, run = fresh()
    p = os.path.join(run, "after.snapshot.json")
    sample = snapshot_sample(p, "vllm:prefix_cache_hits_total")
    replace_in(p, sample, sample.rsplit(" ", 1)[0] + " NaN")
    code, doc, err = analyze_json(run)
    not_pass(doc, "T17", "vllm:prefix_cache_hits_total = NaN")
    expect("nan%" not in json.dumps(doc).lower(), "a NaN share is shown")


@case("an impossible GPU clock (1e308 MHz): T16 can't tell, naming the file and line")
def _():
    base, run = fresh("vllm-t16-t18")
    p = os.path.join(run, "gpu.samples.jsonl")
    line = line_of(p, '"sm_clock_mhz": 1395.0')
    replace_in(p, '"sm_clock_mhz": 1395.0', '"sm_clock_mhz": 1e308')
    code, doc, err = analyze_json(run)
    not_pass(doc, "T16", f"gpu.samples.jsonl:{line}: sm_clock_mhz = 1e308")
    expect(f"gpu.samples.jsonl:{line}: sm_clock_mhz = 1e308" in err, err)


@case("a NaN time to first token: T18 can't tell (the request is not silently dropped)")
def _():
    base, run = fresh("vllm-t16-t18")
    p = os.path.join(run, "bench.json")
    text = open(p).read()
    import re
    text, n = re.subn(r'"ttfts":\s*\[[^,\]]*', '"ttfts":[NaN', text, count=1)
    expect(n == 1, "no ttfts in bench.json")
    open(p, "w").write(text)
    code, doc, err = analyze_json(run)
    not_pass(doc, "T18", "bench.json: ttfts[0] = NaN")


@case("a hostile fleet: bad fleet.json values, a linked replica, a bad id: no panic, links skipped")
def _():
    base, run = fresh()
    os.makedirs(os.path.join(run, "replicas", "a"))
    for n in ("before.snapshot.json", "after.snapshot.json", "run.series.jsonl"):
        shutil.move(os.path.join(run, n), os.path.join(run, "replicas", "a", n))
    os.symlink(base, os.path.join(run, "replicas", "outside"))
    os.mkdir(os.path.join(run, "replicas", "a b"))
    with open(os.path.join(run, "fleet.json"), "w") as f:
        f.write('{"schema": "inferlint.fleet/1", "step_s": 1e308, "scrape_interval_s": NaN, '
                '"replicas": [{"id": "../../etc", "instance": "\u001b[2J"}, {"id": 7}]}')
    code, out, err = analyze(run)
    expect(code in (1, 2) and "panicked" not in err, f"exit {code}: {err}")
    expect("\x1b" not in out, "an escape reached the terminal")
    code, doc, err = analyze_json(run)
    skipped = {s["name"]: s["reason"] for s in doc["skipped"]}
    expect("symbolic link" in skipped.get("replicas/outside", ""), f"{skipped}")
    expect("not a replica id" in skipped.get("replicas/a b", ""), f"{skipped}")
    expect([r["id"] for r in doc["replicas"]] == ["a"], f"{doc['replicas']}")
    untouched(base)


@case("escape sequences in a boot log and a folder name never reach the terminal")
def _():
    base, run = fresh()
    with open(os.path.join(run, "boot.log"), "a") as f:
        f.write("ERROR \x1b]0;pwned\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x08\x08\x08 "
                "RuntimeError: CUDA out of memory\n")
    odd = os.path.join(base, "run\x1b[2J\x07")
    os.rename(run, odd)
    code, out, err = analyze(odd)
    for ch in ("\x1b", "\x07", "\x08"):
        expect(ch not in out and ch not in err, f"{ch!r} reached the terminal")
    expect("\\x1b" in out + err, "the escape is not shown as text")


# --- the recorder --------------------------------------------------------------------

def recorder_run(*args, no_gpu=True, timeout=60):
    e = dict(env)
    scratch = tempfile.mkdtemp(dir=work)
    if no_gpu:
        e["PATH"] = scratch
    t = time.time()
    r = subprocess.run([recorder, *args], capture_output=True, timeout=timeout, env=e)
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace"), time.time() - t


def fake_proc():
    root = tempfile.mkdtemp(dir=work)
    os.mkdir(os.path.join(root, "self"))
    return root


@case("gpu-inspect without nvidia-smi: T2 can't tell at once (not FAILED after 10 s)")
def _():
    code, out, took = recorder_run("gpu-inspect", "--proc-root", fake_proc())
    expect(code == 2 and "can't tell whether the GPU is free" in out, f"exit {code}: {out}")
    expect("TRIPWIRE-FAILED" not in out and took < 5, f"{took:.1f}s: {out}")


@case("teardown without nvidia-smi: T2 can't tell at once (not FAILED after 120 s)")
def _():
    code, out, took = recorder_run("teardown", "--proc-root", fake_proc())
    expect(code == 2 and "can't tell" in out and "None MiB" not in out, f"exit {code}: {out}")
    expect(took < 10, f"{took:.1f}s")


for flags, what in [
    (["watch", "http://127.0.0.1:9", "-o", "x", "--interval", "1e308"], "watch --interval 1e308"),
    (["watch", "http://127.0.0.1:9", "-o", "x", "--duration", "NaN"], "watch --duration NaN"),
    (["gpu-inspect", "--timeout", "NaN"], "gpu-inspect --timeout NaN"),
    (["teardown", "--timeout=-1"], "teardown --timeout -1"),
    (["probe", "http://127.0.0.1:9", "--concurrency", "0"], "probe --concurrency 0"),
    (["record", "--interval", "inf", "--", "true"], "record --interval inf"),
]:
    def make(flags=flags):
        def f():
            code, out, took = recorder_run(*flags, no_gpu=False, timeout=20)
            expect(code == 2 and "invalid value" in out and "panicked" not in out,
                   f"exit {code}: {out}")
        return f
    cases.append((f"{what}: refused by the flag parser, exit 2, no panic", make()))


for name, f in cases:
    try:
        f()
        print(f"ok    {name}")
    except Exception as e:  # noqa: BLE001 - every failure is reported, then the next case
        failures.append(name)
        print(f"FAIL  {name}: {e}")
shutil.rmtree(work, ignore_errors=True)
print(f"{len(cases) - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)

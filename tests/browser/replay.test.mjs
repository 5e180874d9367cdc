// The replay section in headless Chromium (run with viewer.test.mjs by `cargo xtask test`;
// same environment: INFERLINT_BIN, INFERLINT_PAGE, CHROMIUM, INFERLINT_FIXTURES).
//
// What is checked, on the one-file report `inferlint analyze --html` writes: the replay
// plays, pauses and seeks (buttons, slider and keys), exposes its moment as
// `data-replay-t`, shows the frame's figures as results.json has them, and the time
// charts' replay cursor follows it; where the recording's preemption counter rose (read
// here from run.series.jsonl itself) the columns drop by as much, on the seed-like vLLM
// run with per-request times (fixtures/recorded/vllm-replay) and, as thrown-out layers, on
// the seed's GPU run without them (../shared/fixtures/vllm-0.28/live); SGLang and
// TensorRT-LLM runs; the 24-hour recording stays within a bounded number of frames and
// seeks at once; light and dark themes; no network request.
//
// INFERLINT_REPLAY_PNG=path saves a screenshot of the replay there (docs/replay.png).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../..");
const BIN = process.env.INFERLINT_BIN || path.join(ROOT, "target/release/inferlint");
const SHARED = process.env.INFERLINT_FIXTURES || path.resolve(ROOT, "../shared/fixtures");
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), "inferlint-replay-"));

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});

after(async () => {
  await browser?.close();
  fs.rmSync(WORK, { recursive: true, force: true });
});

/** A writable copy of a run folder's files, without what `analyze` writes. */
function copyRun(src, name) {
  const dst = path.join(WORK, name);
  fs.mkdirSync(dst, { recursive: true });
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    if (e.isFile() && e.name !== "results.json" && e.name !== "report.html") {
      fs.copyFileSync(path.join(src, e.name), path.join(dst, e.name));
      fs.chmodSync(path.join(dst, e.name), 0o644);
    }
  }
  return dst;
}

/** `inferlint analyze DIR --json --html DIR/report.html …`: the Report and the page. */
function analyze(dir, extra = []) {
  const html = path.join(dir, "report.html");
  const r = spawnSync(BIN, ["analyze", dir, "--json", "--html", html, ...extra], {
    encoding: "utf8",
    env: { ...process.env, TZ: "UTC" },
    maxBuffer: 1 << 30,
  });
  assert.ok([0, 1, 2].includes(r.status), `analyze ${dir}: ${r.stderr}`);
  return { report: JSON.parse(r.stdout), html };
}

/** Opens a page from file:// and waits until the viewer is ready. */
async function open(file, { colorScheme = "light" } = {}) {
  const context = await browser.newContext({ colorScheme, timezoneId: "UTC", viewport: { width: 1280, height: 1000 } });
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const requests = [];
  const errors = [];
  page.on("request", (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => ["ready", "failed"].includes(document.documentElement.getAttribute("data-state")), null, { timeout: 60_000 });
  assert.equal(await page.getAttribute("html", "data-state"), "ready", "the viewer started");
  return { context, page, requests, errors };
}

/** The replay container's data attributes, as numbers where they are. */
async function state(page) {
  return page.$eval(".replay", (e) => ({
    t: Number(e.dataset.replayT),
    frame: Number(e.dataset.frame),
    frames: Number(e.dataset.frames),
    playing: e.dataset.playing === "true",
    columns: Number(e.dataset.columns),
    dropped: Number(e.dataset.dropped),
    mode: e.dataset.mode,
  }));
}

/** Moves the slider to frame k as a reader's input would. */
async function seek(page, k) {
  await page.$eval(
    "#replay-seek",
    (el, v) => {
      el.value = String(v);
      el.dispatchEvent(new Event("input", { bubbles: true }));
    },
    k,
  );
  await page.waitForFunction((v) => document.querySelector(".replay").dataset.frame === String(v), k);
}

/** The replay's canvas has been drawn: more than its background. */
async function sceneDrawn(page) {
  const s = await page.$eval("#replay canvas", (c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    let inked = 0;
    const [r0, g0, b0] = [d[0], d[1], d[2]];
    for (let i = 0; i < d.length; i += 4 * 5) {
      colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      if (Math.abs(d[i] - r0) + Math.abs(d[i + 1] - g0) + Math.abs(d[i + 2] - b0) > 60) inked++;
    }
    return { drawn: c.parentElement.getAttribute("data-drawn"), colours: colours.size, inked, bg: [r0, g0, b0] };
  });
  assert.equal(s.drawn, "yes", "the scene drew");
  assert.ok(s.colours > 4 && s.inked > 500, `the scene has pixels (${s.colours} colours, ${s.inked} inked)`);
  return s;
}

/** Where the preemption counter rose: [reading index, seconds since the first reading,
 * rise], read from the series file itself. */
function counterRises(dir) {
  const lines = fs.readFileSync(path.join(dir, "run.series.jsonl"), "utf8").trim().split("\n").slice(1).map((l) => JSON.parse(l));
  const t0 = lines[0].t_mono_ns;
  const out = [];
  for (let k = 1; k < lines.length; k++) {
    const rise = lines[k].preemptions - lines[k - 1].preemptions;
    if (rise > 0) out.push([k, (lines[k].t_mono_ns - t0) / 1e9, rise]);
  }
  return { rises: out, readings: lines.length };
}

/** Plays at `speed` (slow enough that the recording does not end within a second),
 * checks the moment moves, pauses, checks it stays. */
async function playPause(page, speed) {
  await page.selectOption("#replay-speed", String(speed));
  const before = await state(page);
  await page.click("#replay-play");
  await page.waitForFunction(
    (t) => Number(document.querySelector(".replay").dataset.replayT) > t + 0.2 || document.querySelector(".replay").dataset.playing === "false",
    before.t,
  );
  const playing = await state(page);
  assert.ok(playing.t > before.t, `the moment moved from ${before.t} to ${playing.t}`);
  if (playing.playing) {
    await page.click("#replay-play");
  }
  const paused = await state(page);
  assert.equal(paused.playing, false, "paused");
  await page.waitForTimeout(300);
  assert.equal((await state(page)).t, paused.t, "a paused replay stays where it is");
  assert.equal(await page.getAttribute("#replay-play", "aria-pressed"), "false");
}

/** The figures beside the scene, as label → value. */
async function figures(page) {
  return page.$$eval("#replay-figures .fact", (els) => Object.fromEntries(els.map((e) => [e.querySelector("dt").textContent, e.querySelector("dd").textContent])));
}

/** The replay cursor's position (px) on the requests chart, or null when hidden. */
async function chartCursor(page) {
  return page.$eval('figure.chart[data-chart="requests"] .replay-cursor', (e) => (e.style.display === "none" ? null : parseFloat(e.style.left)));
}

const fmt0 = (v) => (v === null || v === undefined ? "–" : Math.round(v).toLocaleString("en-US"));

test("the seed-like vLLM run with per-request times: plays, pauses, seeks; columns drop where the counter rose", async () => {
  const src = path.join(ROOT, "fixtures/recorded/vllm-replay");
  const dir = copyRun(src, "vllm-replay");
  const { report, html } = analyze(dir);
  const replay = report.replay;
  assert.equal(replay.mode, "requests");
  const { rises, readings } = counterRises(src);
  assert.ok(rises.length >= 3, `the counter rose ${rises.length} times`);
  const t = await open(html);
  try {
    const { page } = t;
    let s = await state(page);
    assert.equal(s.mode, "requests");
    assert.equal(s.frames, readings, "one frame per reading");
    assert.equal(s.frame, 0);
    assert.equal(s.t, 0);
    await sceneDrawn(page);
    assert.equal(await chartCursor(page), null, "no replay cursor on the charts before the replay is touched");

    await playPause(page, 5);

    // Every rise of the counter: its frame drops as many columns, the figures count it.
    let lastCursor = -1;
    for (const [k, secs, rise] of rises) {
      await seek(page, k);
      s = await state(page);
      assert.ok(Math.abs(s.t - secs) < 0.002, `frame ${k} is at ${secs} s (page: ${s.t})`);
      assert.equal(s.dropped, rise, `columns dropped at ${secs} s`);
      const want = replay.frames.columns[k].filter((c) => c !== null && c > 0).length;
      assert.equal(s.columns, want, `columns holding blocks at ${secs} s`);
      const f = await figures(page);
      assert.equal(f["Running"], fmt0(replay.frames.running[k]));
      assert.equal(f["Preemptions so far"], fmt0(replay.frames.evictions[k]));
      assert.match(f["Request columns"], new RegExp(`, ${rise} thrown out$`));
      const said = await page.textContent("#replay-text");
      assert.ok(said.startsWith(`At ${secs.toFixed(1)} s: running: ${fmt0(replay.frames.running[k])}`), said);
      assert.match(said, new RegExp(`${rise} preemptions? here\\.$`));
      // The requests chart's replay cursor follows, left to right.
      const x = await chartCursor(page);
      assert.ok(x !== null && x > lastCursor, `chart cursor at ${x} px after ${lastCursor} px`);
      lastCursor = x;
      await sceneDrawn(page);
    }
    // A frame before any rise drops nothing.
    await seek(page, rises[0][0] - 1);
    assert.equal((await state(page)).dropped, 0);

    // The keyboard, on the scene: Home, End, arrows (Shift: ten), Space plays and pauses.
    await page.focus("#replay canvas");
    await page.keyboard.press("End");
    assert.equal((await state(page)).frame, readings - 1);
    await page.keyboard.press("Home");
    assert.equal((await state(page)).frame, 0);
    await page.keyboard.press("ArrowRight");
    assert.equal((await state(page)).frame, 1);
    await page.keyboard.press("Shift+ArrowRight");
    assert.equal((await state(page)).frame, 11);
    await page.keyboard.press("ArrowLeft");
    assert.equal((await state(page)).frame, 10);
    await page.keyboard.press("Space");
    await page.waitForFunction(() => document.querySelector(".replay").dataset.playing === "true");
    await page.keyboard.press("Space");
    await page.waitForFunction(() => document.querySelector(".replay").dataset.playing === "false");
    // The slider is a native range input: arrows move it a frame.
    await seek(page, 5);
    await page.focus("#replay-seek");
    await page.keyboard.press("ArrowRight");
    assert.equal((await state(page)).frame, 6);

    // Played to the end, it stops there.
    await seek(page, readings - 3);
    await page.selectOption("#replay-speed", "60");
    await page.click("#replay-play");
    await page.waitForFunction(() => document.querySelector(".replay").dataset.playing === "false");
    s = await state(page);
    assert.equal(s.frame, readings - 1);
    assert.equal(s.t, replay.frames.t[readings - 1]);

    if (process.env.INFERLINT_REPLAY_PNG) {
      // The moment the pool is fullest with requests thrown out, for the README.
      await seek(page, rises[1][0]);
      await page.locator("#replay").screenshot({ path: process.env.INFERLINT_REPLAY_PNG });
    }
    assert.deepEqual(t.requests, [], "no network request");
    assert.deepEqual(t.errors, [], "no script error");
  } finally {
    await t.context.close();
  }
});

const LIVE = path.join(SHARED, "vllm-0.28/live");

test("the seed's GPU run (vllm-0.28/live, no per-request times): layers, a note, thrown-out layers where the counter rose", { skip: !fs.existsSync(LIVE) && "../shared/fixtures is not here" }, async () => {
  const dir = copyRun(LIVE, "live");
  const { report, html } = analyze(dir, ["--requested", "32"]);
  assert.equal(report.replay.mode, "aggregate");
  const { rises, readings } = counterRises(LIVE);
  assert.equal(rises.reduce((a, r) => a + r[2], 0), 22, "22 preemptions in the recording");
  const t = await open(html);
  try {
    const { page } = t;
    const s = await state(page);
    assert.equal(s.mode, "aggregate");
    assert.equal(s.frames, readings);
    await sceneDrawn(page);
    const notes = await page.$$eval("#replay .note", (els) => els.map((e) => e.textContent));
    assert.ok(notes.some((n) => n.includes("Per-request columns need the load tool's per-request times")), notes.join(" | "));
    await playPause(page, 30);
    for (const [k, secs, rise] of rises) {
      await seek(page, k);
      const now = await state(page);
      assert.ok(Math.abs(now.t - secs) < 0.002, `frame ${k} at ${secs} s`);
      assert.equal(now.dropped, rise, `layers thrown out at ${secs} s`);
    }
    // The pool at its ceiling: 42 usable blocks, the gauge at 40 of them with 10 running.
    await seek(page, 30);
    const f = await figures(page);
    assert.equal(f["Running"], "10");
    assert.equal(f["KV in use"], "40 of 42 blocks (95%)");
    assert.deepEqual(t.requests, []);
    assert.deepEqual(t.errors, []);
  } finally {
    await t.context.close();
  }
});

for (const [name, engineWord, counted] of [
  ["sglang", "Retractions so far", true],
  ["trtllm", "Pauses so far", false],
]) {
  test(`a recorded ${name} run: the replay plays, pauses and seeks`, async () => {
    const dir = copyRun(path.join(ROOT, "fixtures/recorded", name), name);
    const { report, html } = analyze(dir);
    const t = await open(html, { colorScheme: name === "sglang" ? "dark" : "light" });
    try {
      const { page } = t;
      const s = await state(page);
      assert.equal(s.mode, report.replay.mode);
      assert.equal(s.frames, report.replay.frames.t.length);
      const drawn = await sceneDrawn(page);
      if (name === "sglang") {
        assert.ok(drawn.bg.reduce((a, b) => a + b, 0) < 150, `a dark scene: background ${drawn.bg}`);
      } else {
        assert.ok(drawn.bg.reduce((a, b) => a + b, 0) > 600, `a light scene: background ${drawn.bg}`);
      }
      // Slowly: a short recording must not end between playing and pausing.
      await playPause(page, 2);
      await page.focus("#replay canvas");
      await page.keyboard.press("End");
      const end = await state(page);
      assert.equal(end.frame, s.frames - 1);
      const f = await figures(page);
      assert.ok(engineWord in f, Object.keys(f).join(", "));
      if (!counted) assert.equal(f[engineWord], "not counted");
      assert.deepEqual(t.requests, []);
      assert.deepEqual(t.errors, []);
    } finally {
      await t.context.close();
    }
  });
}

test("a 24-hour recording replays from a bounded number of frames and seeks at once", { timeout: 600_000 }, async () => {
  const dir = path.join(WORK, "long24");
  const gen = spawnSync("cargo", ["run", "--release", "-q", "-p", "viewer", "--example", "long_run", "--", dir], { cwd: ROOT, encoding: "utf8" });
  assert.equal(gen.status, 0, gen.stderr);
  const { report, html } = analyze(dir, ["--requested", "32"]);
  const replay = report.replay;
  assert.ok(replay.frames.t.length <= 1201, `${replay.frames.t.length} frames`);
  assert.equal(replay.reduced_from, 345_600);
  const t = await open(html);
  try {
    const { page } = t;
    const s = await state(page);
    assert.equal(s.frames, replay.frames.t.length);
    await sceneDrawn(page);
    await playPause(page, 60);
    // Seeking across the whole day: each one drawn within a frame or two.
    const started = Date.now();
    for (const k of [s.frames - 1, 0, Math.floor(s.frames / 2), 17]) await seek(page, k);
    const ms = (Date.now() - started) / 4;
    console.log(`24-hour replay: ${s.frames} frames; a seek took ${ms.toFixed(0)} ms`);
    assert.ok(ms < 1000, `a seek took ${ms} ms`);
    await page.keyboard.press("End");
    assert.deepEqual(t.requests, []);
    assert.deepEqual(t.errors, []);
  } finally {
    await t.context.close();
  }
});

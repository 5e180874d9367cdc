// The viewer in headless Chromium (run by `cargo xtask test`, or `cargo xtask browser-tests`).
//
// Environment (set by the xtask): INFERLINT_BIN (the command line, with the viewer inside),
// INFERLINT_PAGE (www/dist/index.html, the one-file page), CHROMIUM, and INFERLINT_FIXTURES
// (../shared/fixtures) when the recorded runs are there.
//
// What is checked, for every run folder of ../shared/fixtures (each `report …` case) and
// of fixtures/: the one-file report written by `inferlint analyze --html`, opened from
// file://, shows the same verdicts (status and message of every result), tiles, limits and
// facts as `inferlint analyze --json`, and every chart has pixels on its canvas. Then:
// dropping a folder and picking one load it; dropping three folders (or picking a folder
// of run folders, or opening `compare --html`) shows the same comparison as
// `inferlint compare --json`, with one series per run in every overlaid chart; a broken file gives a message naming it and
// still every other verdict; no network request is made; a hostile boot-log line and title
// run nothing; the theme switch; the keyboard readout; the 24-hour recording's size and
// time to first complete paint; a sweep's phase table and the phase named in a chart's readout.

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
const PAGE = process.env.INFERLINT_PAGE || path.join(ROOT, "www/dist/index.html");
const SHARED = process.env.INFERLINT_FIXTURES || path.resolve(ROOT, "../shared/fixtures");
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), "inferlint-browser-"));
const HOSTILE = "<img src=x onerror=alert(1)>";

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
});

after(async () => {
  await browser?.close();
  fs.rmSync(WORK, { recursive: true, force: true });
});

/** Copies a folder's regular files (not subfolders) into a fresh writable folder. */
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

/** `inferlint analyze DIR --json --html OUT …`: the Report and the page written. */
function analyze(dir, extra = [], out = path.join(dir, "report.html")) {
  const r = spawnSync(BIN, ["analyze", dir, "--json", "--html", out, ...extra], {
    encoding: "utf8",
    env: { ...process.env, TZ: "UTC" },
    maxBuffer: 1 << 30,
  });
  assert.ok(r.status === 0 || r.status === 1 || r.status === 2, `analyze ${dir}: ${r.stderr}`);
  return { report: JSON.parse(r.stdout), html: out, stderr: r.stderr };
}

/** Opens a page from file:// and waits until the viewer says it is ready. */
async function open(file, { colorScheme = "light", init } = {}) {
  const context = await browser.newContext({ colorScheme, timezoneId: "UTC" });
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const requests = [];
  const dialogs = [];
  const errors = [];
  page.on("request", (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  if (init) await page.addInitScript(init);
  await page.goto(url);
  await waitReady(page);
  return { context, page, requests, dialogs, errors, url };
}

async function waitReady(page, timeout = 60_000) {
  await page.waitForFunction(
    () => ["ready", "failed"].includes(document.documentElement.getAttribute("data-state")),
    null,
    { timeout },
  );
  const state = await page.evaluate(() => document.documentElement.getAttribute("data-state"));
  assert.equal(state, "ready", "the viewer started");
}

/** Every verdict in the page: [id, status, message], sorted. */
async function verdicts(page) {
  return page.$$eval("li.finding[data-tripwire]", (els) =>
    els
      .map((e) => [
        e.getAttribute("data-tripwire"),
        e.getAttribute("data-status"),
        e.querySelector(".message")?.textContent ?? "",
      ])
      .sort((a, b) => (a.join("\u0000") < b.join("\u0000") ? -1 : 1)),
  );
}

function expected(report, withMessages = true) {
  return report.checks
    .map((c) => [c.id, c.status, withMessages ? c.message : ""])
    .sort((a, b) => (a.join("\u0000") < b.join("\u0000") ? -1 : 1));
}

function chartCount(report) {
  const c = report.charts || {};
  return ["cache", "requests", "kv", "tokens", "levels", "pools", "memory", "gpu", "prefix_cache"].filter((k) => c[k]).length;
}

const ENGINE_NAMES = { vllm: "vLLM", sglang: "SGLang", trtllm: "TensorRT-LLM" };

/** The Report's folded line (`Report::folded_line`): "n passed" ("All n checks passed" when nothing else is shown) plus
 * "; k does/do not apply to <engine>"; null when nothing is folded. */
function foldedLine(report) {
  const n = (s) => report.checks.filter((c) => c.status === s).length;
  // A sweep whose worst phase needs attention is never "All n checks passed".
  const phaseShown = (report.phases || []).some((p) => ["fail", "warn", "unknown"].includes(p.status)) ? 1 : 0;
  const [pass, na, shown] = [n("pass"), n("not_applicable"), n("fail") + n("warn") + n("unknown") + phaseShown];
  if (pass + na === 0) return null;
  let line = shown === 0 ? `All ${pass} checks passed` : `${pass} passed`;
  if (na > 0) line += `; ${na} ${na === 1 ? "does" : "do"} not apply to ${ENGINE_NAMES[report.engine ?? "vllm"]}`;
  return line;
}

/** Checks a loaded page against the command line's Report. */
async function sameAsCommandLine(page, report, { messages = true } = {}) {
  const got = await verdicts(page);
  const want = expected(report, messages);
  assert.deepEqual(messages ? got : got.map(([a, b]) => [a, b, ""]), want, "verdicts");
  if (!messages) return;
  assert.equal(await page.textContent("#title"), report.title, "title");
  const tiles = await page.$$eval(".tile", (els) =>
    els.map((e) => [
      e.getAttribute("data-key"),
      e.querySelector(".tile-value").textContent,
      e.querySelector(".tile-sub").textContent,
    ]),
  );
  assert.deepEqual(tiles, (report.tiles || []).map((t) => [t.key, t.value, t.sub]), "tiles");
  const limits = await page.$$eval("li.limit", (els) =>
    els.map((e) => [e.getAttribute("data-key"), e.querySelector("h3").textContent, e.querySelector("p").textContent]),
  );
  assert.deepEqual(limits, (report.limits || []).map((l) => [l.key, l.title, l.text]), "limits");
  for (const part of ["test", "setup"]) {
    const facts = await page.$$eval(`#${part} .fact`, (els) =>
      els.map((e) => [e.querySelector("dt").textContent, e.querySelector("dd").textContent]),
    );
    assert.deepEqual(facts, (report[part] || []).map((f) => [f.label, f.value]), part);
  }
  const counts = await page.$$eval("#counts li", (els) =>
    Object.fromEntries(els.map((e) => [e.getAttribute("data-status"), Number(e.getAttribute("data-count"))])),
  );
  for (const s of ["fail", "warn", "unknown", "pass"]) {
    assert.equal(counts[s], report.checks.filter((c) => c.status === s).length, `count of ${s}`);
  }
  const text = (sel) => page.$eval(sel, (e) => e.textContent).catch(() => null);
  assert.equal(await text("#status-note"), report.status_note ?? null, "status note");
  assert.equal(await text("#passed > summary"), foldedLine(report), "the line passes are folded under");
  await chartsDrawn(page, chartCount(report));
}

/** Every chart drew: its canvas holds more than the background colour. */
async function chartsDrawn(page, count) {
  const charts = await page.$$eval("figure.chart", (figs) =>
    figs.map((f) => {
      const c = f.querySelector("canvas");
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      const colours = new Set();
      let inked = 0;
      const [r0, g0, b0] = [d[0], d[1], d[2]];
      for (let i = 0; i < d.length; i += 4 * 7) {
        colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        if (Math.abs(d[i] - r0) + Math.abs(d[i + 1] - g0) + Math.abs(d[i + 2] - b0) > 60) inked++;
      }
      return { key: f.getAttribute("data-chart"), drawn: f.querySelector(".plot").getAttribute("data-drawn"), colours: colours.size, inked };
    }),
  );
  assert.equal(charts.length, count, `charts shown: ${charts.map((c) => c.key)}`);
  for (const c of charts) {
    assert.equal(c.drawn, "yes", `${c.key} drawn`);
    assert.ok(c.colours > 3 && c.inked > 200, `${c.key} has pixels (${c.colours} colours, ${c.inked} inked)`);
  }
}

function noNetwork(t) {
  assert.deepEqual(t.requests, [], "no request beyond the page itself");
  assert.deepEqual(t.dialogs, [], "no dialog");
  assert.deepEqual(t.errors, [], "no script error");
}

// ---- the run folders -------------------------------------------------------------------

function runFolders() {
  const cases = [];
  const ev = path.join(SHARED, "expected-verdicts.json");
  if (fs.existsSync(ev)) {
    for (const key of Object.keys(JSON.parse(fs.readFileSync(ev, "utf8")))) {
      const m = key.match(/^report (\S+)(.*)$/);
      if (m) cases.push({ name: `shared ${m[1]}`, dir: path.join(SHARED, m[1]), extra: m[2].trim().split(/\s+/).filter(Boolean) });
    }
  }
  for (const group of ["edge", "recorded", "real"]) {
    const base = path.join(ROOT, "fixtures", group);
    if (!fs.existsSync(base)) continue;
    for (const e of fs.readdirSync(base, { withFileTypes: true })) {
      if (e.isDirectory()) cases.push({ name: `fixtures/${group}/${e.name}`, dir: path.join(base, e.name), extra: [] });
    }
  }
  return cases;
}

const FOLDERS = runFolders();

test("there are run folders to check", () => {
  assert.ok(FOLDERS.length >= 6, `found ${FOLDERS.length}`);
});

for (const c of FOLDERS) {
  test(`one-file report matches analyze --json: ${c.name} ${c.extra.join(" ")}`, async () => {
    const dir = copyRun(c.dir, c.name.replace(/[^\w.-]+/g, "_"));
    const { report, html } = analyze(dir, c.extra);
    const t = await open(html);
    try {
      await sameAsCommandLine(t.page, report);
      noNetwork(t);
    } finally {
      await t.context.close();
    }
  });
}

// ---- the static page: drop and pick -----------------------------------------------------

function filesOf(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => ({ name: e.name, b64: fs.readFileSync(path.join(dir, e.name)).toString("base64") }));
}

const LIVE = fs.existsSync(path.join(SHARED, "vllm-0.28/live"))
  ? path.join(SHARED, "vllm-0.28/live")
  : path.join(ROOT, "fixtures/edge/restart");

test("picking a folder loads it, and it can be saved as one file", async () => {
  const dir = copyRun(LIVE, "pick/live");
  const { report } = analyze(dir, [], path.join(WORK, "pick.html"));
  const t = await open(PAGE);
  try {
    await t.page.setInputFiles("#dir", dir);
    await waitReady(t.page);
    await t.page.waitForSelector("li.finding");
    await sameAsCommandLine(t.page, report, { messages: false });
    await chartsDrawn(t.page, chartCount(report));
    // Save as one file, then open the saved file: the same verdicts, recomputed.
    const [download] = await Promise.all([t.page.waitForEvent("download"), t.page.click("#save")]);
    const saved = path.join(WORK, "saved.html");
    await download.saveAs(saved);
    const s = await open(saved);
    try {
      assert.deepEqual(await verdicts(s.page), await verdicts(t.page), "the saved file shows the same verdicts");
      noNetwork(s);
    } finally {
      await s.context.close();
    }
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("a concurrency typed into the page re-analyzes the run on show", async (t0) => {
  if (!fs.existsSync(path.join(SHARED, "vllm-0.28/live"))) return t0.skip("recorded runs not found");
  // vllm-0.28/live has no load-tool result, so without a concurrency T8 can't tell and
  // names the flag that decides it.
  const dir = copyRun(path.join(SHARED, "vllm-0.28/live"), "requested/live");
  const { html, report } = analyze(dir, [], path.join(WORK, "requested.html"));
  const t8r = report.checks.find((c) => c.id === "T8");
  assert.equal(t8r && t8r.status, "unknown");
  assert.match(t8r.message, /--requested/);
  const t = await open(html);
  try {
    const t8 = () => t.page.$eval('li.finding[data-tripwire="T8"]', (e) => e.getAttribute("data-status")).catch(() => null);
    assert.equal(await t8(), "unknown");
    for (const [value, want] of [["32", "fail"], ["8", "pass"], ["", "unknown"]]) {
      await t.page.fill("#requested", value);
      await t.page.dispatchEvent("#requested", "change");
      await waitReady(t.page);
      assert.equal(await t8(), want, `T8 with ${value || "no"} concurrency`);
    }
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("choosing files one by one loads them", async () => {
  const dir = copyRun(LIVE, "files/live");
  const { report } = analyze(dir, [], path.join(WORK, "files.html"));
  const t = await open(PAGE);
  try {
    await t.page.setInputFiles("#files", fs.readdirSync(dir).filter((n) => n !== "report.html" && n !== "results.json").map((n) => path.join(dir, n)));
    await waitReady(t.page);
    await t.page.waitForSelector("li.finding");
    await sameAsCommandLine(t.page, report, { messages: false });
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("dropping a folder loads it (directory entries walked)", async () => {
  const dir = copyRun(LIVE, "drop/live");
  const { report } = analyze(dir, [], path.join(WORK, "drop.html"));
  const t = await open(PAGE);
  try {
    // A drop as Chromium delivers a folder: one item whose entry is a directory, read
    // through createReader().readEntries() in batches, each file through entry.file().
    await t.page.evaluate((files) => {
      const toFile = (f) => new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name);
      const fileEntry = (f) => ({ isFile: true, isDirectory: false, name: f.name, fullPath: `/live/${f.name}`, file: (ok) => setTimeout(() => ok(toFile(f)), 0) });
      const dirEntry = {
        isFile: false,
        isDirectory: true,
        name: "live",
        fullPath: "/live",
        createReader() {
          let batches = [files.slice(0, 2).map(fileEntry), files.slice(2).map(fileEntry), []];
          return { readEntries: (ok) => setTimeout(() => ok(batches.shift() || []), 0) };
        },
      };
      const item = { kind: "file", type: "", webkitGetAsEntry: () => dirEntry, getAsFile: () => null };
      const ev = new Event("drop", { bubbles: true, cancelable: true });
      Object.defineProperty(ev, "dataTransfer", { value: { items: [item], files: [], types: ["Files"] } });
      document.getElementById("drop").dispatchEvent(ev);
    }, filesOf(dir).filter((f) => f.name !== "report.html" && f.name !== "results.json"));
    await t.page.waitForSelector("li.finding");
    await waitReady(t.page);
    await sameAsCommandLine(t.page, report, { messages: false });
    assert.match(await t.page.textContent("footer"), /the folder live/);
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("dropping files (a real DataTransfer) loads them", async () => {
  const dir = copyRun(LIVE, "drop2/live");
  const { report } = analyze(dir, [], path.join(WORK, "drop2.html"));
  const t = await open(PAGE);
  try {
    await t.page.evaluate((files) => {
      const dt = new DataTransfer();
      for (const f of files) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
      document.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, filesOf(dir).filter((f) => f.name !== "report.html" && f.name !== "results.json"));
    await t.page.waitForSelector("li.finding");
    await waitReady(t.page);
    await sameAsCommandLine(t.page, report, { messages: false });
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

// ---- several runs compared --------------------------------------------------------------

const THREE = ["vllm-0.30/qwen3-8b-start1", "sglang-0.5/qwen3-8b", "trtllm-1.3/qwen3-8b"];

/** `inferlint compare DIR… --json [--html OUT]`: the Comparison. */
function compareJson(dirs, extra = []) {
  const r = spawnSync(BIN, ["compare", ...dirs, "--json", ...extra], { encoding: "utf8", env: { ...process.env, TZ: "UTC" }, maxBuffer: 1 << 30 });
  assert.ok(r.status === 0 || r.status === 1, `compare: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Drops folders as Chromium delivers them: one item per folder, each a directory entry
 * read through createReader().readEntries() in batches, each file through entry.file(). */
async function dropFolders(page, folders) {
  await page.evaluate((folders) => {
    const toFile = (f) => new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name);
    const items = folders.map(({ name, files }) => {
      const fileEntry = (f) => ({ isFile: true, isDirectory: false, name: f.name, fullPath: `/${name}/${f.name}`, file: (ok) => setTimeout(() => ok(toFile(f)), 0) });
      const dirEntry = {
        isFile: false,
        isDirectory: true,
        name,
        fullPath: `/${name}`,
        createReader() {
          const batches = [files.slice(0, 3).map(fileEntry), files.slice(3).map(fileEntry), []];
          return { readEntries: (ok) => setTimeout(() => ok(batches.shift() || []), 0) };
        },
      };
      return { kind: "file", type: "", webkitGetAsEntry: () => dirEntry, getAsFile: () => null };
    });
    const ev = new Event("drop", { bubbles: true, cancelable: true });
    Object.defineProperty(ev, "dataTransfer", { value: { items, files: [], types: ["Files"] } });
    document.getElementById("drop").dispatchEvent(ev);
  }, folders);
}

/** The comparison table in the page: column labels and each row's cells, by key. */
async function compareTable(page) {
  const columns = await page.$$eval("table.compare th.run", (els) => els.map((e) => e.textContent.trim()));
  const rows = await page.$$eval("table.compare tbody tr", (els) =>
    Object.fromEntries(els.map((e) => [e.getAttribute("data-key"), { matters: e.getAttribute("data-matters") === "true", cells: [...e.querySelectorAll("td")].map((td) => td.textContent) }])),
  );
  return { columns, rows };
}

/** The page's table shows what `compare --json` says, and every overlaid chart has one
 * series (and legend entry) per run, drawn. */
async function sameComparison(page, cmp, runs) {
  const { columns, rows } = await compareTable(page);
  assert.equal(columns.length, runs, "one column per run");
  for (const r of cmp.rows) {
    assert.deepEqual(rows[r.key]?.cells, r.cells.map((c) => c.text), `row ${r.key}`);
    assert.equal(rows[r.key].matters, r.matters, `row ${r.key} matters`);
  }
  const figs = await page.$$eval("figure.overlay", (els) =>
    els.map((f) => ({
      key: f.getAttribute("data-chart"),
      series: Number(f.getAttribute("data-series")),
      legend: f.querySelectorAll("li.legend-entry").length,
    })),
  );
  assert.ok(figs.length >= 2, `overlaid charts: ${JSON.stringify(figs)}`);
  for (const f of figs) {
    assert.equal(f.series, runs, `${f.key}: one series per run`);
    assert.equal(f.legend, runs, `${f.key}: one legend entry per run`);
  }
  await chartsDrawn(page, figs.length);
}

test("dropping three folders compares them: three columns, three series per chart", async (t0) => {
  if (!THREE.every((r) => fs.existsSync(path.join(SHARED, r)))) return t0.skip("recorded runs not found");
  const dirs = THREE.map((r) => copyRun(path.join(SHARED, r), `three/${r}`));
  const cmp = compareJson(dirs);
  const t = await open(PAGE);
  try {
    await dropFolders(
      t.page,
      dirs.map((d, i) => ({ name: THREE[i].replace("/", "_"), files: filesOf(d).filter((f) => f.name !== "report.html" && f.name !== "results.json") })),
    );
    await t.page.waitForSelector("table.compare");
    await waitReady(t.page);
    await sameComparison(t.page, cmp, 3);
    // The landing page's figures, in the browser's own analysis.
    const { rows } = await compareTable(t.page);
    assert.deepEqual(rows.kv_pool_tokens.cells, ["32,336 tokens", "32,096 tokens", "37,760 tokens"]);
    assert.deepEqual(rows.peak_running.cells, ["32", "29", "32"]);
    assert.deepEqual(rows.output_tokens_per_s_client.cells, ["1,274", "799", "1,389"]);
    assert.ok((await t.page.$$eval("#readings li", (e) => e.length)) > 0, "readings shown");
    // Saved as one file, it opens on the same comparison.
    const [download] = await Promise.all([t.page.waitForEvent("download"), t.page.click("#save")]);
    const saved = path.join(WORK, "saved-compare.html");
    await download.saveAs(saved);
    const s = await open(saved);
    try {
      await sameComparison(s.page, cmp, 3);
      noNetwork(s);
    } finally {
      await s.context.close();
    }
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("compare --baseline --html opens on the comparison with its regressions", async (t0) => {
  const pair = ["sglang-0.5/qwen3-8b-own-client", "sglang-0.5/qwen3-8b"];
  if (!pair.every((r) => fs.existsSync(path.join(SHARED, r)))) return t0.skip("recorded runs not found");
  const dirs = pair.map((r) => copyRun(path.join(SHARED, r), `baseline/${r}`));
  const html = path.join(WORK, "compare.html");
  const cmp = compareJson(dirs, ["--baseline", "--html", html]);
  assert.ok(cmp.baseline.regressions.length > 0);
  const t = await open(html);
  try {
    await sameComparison(t.page, cmp, 2);
    const shown = await t.page.$$eval("#baseline li.regression", (els) => els.map((e) => e.getAttribute("data-key")));
    assert.deepEqual(shown, cmp.baseline.regressions.map((r) => r.key));
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("picking a folder of run folders compares them", async (t0) => {
  const pair = ["trtllm-1.3/qwen3-8b", "vllm-0.30/qwen3-8b-start1"];
  if (!pair.every((r) => fs.existsSync(path.join(SHARED, r)))) return t0.skip("recorded runs not found");
  const dirs = pair.map((r) => copyRun(path.join(SHARED, r), `parent/${r.replace("/", "_")}`));
  const cmp = compareJson(dirs);
  const t = await open(PAGE);
  try {
    await t.page.setInputFiles("#dir", path.join(WORK, "parent"));
    await t.page.waitForSelector("table.compare");
    await waitReady(t.page);
    await sameComparison(t.page, cmp, 2);
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

// ---- a broken file, a hostile line -------------------------------------------------------

test("a broken file names itself and every other verdict is still shown", async () => {
  const dir = copyRun(LIVE, "broken/live");
  fs.writeFileSync(path.join(dir, "after.snapshot.json"), "{ this is not json\n");
  const { report, html } = analyze(dir);
  assert.ok(report.checks.length > 0);
  for (const file of [html, null]) {
    const t = await open(file || PAGE);
    try {
      if (!file) {
        await t.page.setInputFiles("#dir", dir);
        await t.page.waitForSelector("li.finding");
        await waitReady(t.page);
      }
      const msg = await t.page.textContent("#input-errors");
      assert.match(msg, /after\.snapshot\.json/);
      await sameAsCommandLine(t.page, report, { messages: !!file });
      noNetwork(t);
    } finally {
      await t.context.close();
    }
  }
});

test("a hostile boot-log line and title render as text and run nothing", async () => {
  const dir = copyRun(LIVE, "hostile/live");
  const log = path.join(dir, "boot.log");
  if (fs.existsSync(log)) fs.appendFileSync(log, `ERROR 09-26 17:52:30 [core.py:1] ${HOSTILE}\n`);
  const { report, html } = analyze(dir, ["--title", HOSTILE]);
  const t = await open(html, { init: () => { window.alert = () => { window.__alerted = true; }; } });
  try {
    assert.equal(await t.page.textContent("#title"), HOSTILE);
    assert.equal(await t.page.$$eval("img", (e) => e.length), 0, "no img element");
    assert.equal(await t.page.evaluate(() => window.__alerted === true), false, "nothing ran");
    assert.equal(await t.page.title(), HOSTILE, "the tab title is text too");
    await sameAsCommandLine(t.page, report);
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

// ---- theme and keyboard ---------------------------------------------------------------------

test("the theme follows the system until flipped, then the choice is remembered and applied before first paint", async () => {
  const dir = copyRun(LIVE, "theme/live");
  const { html } = analyze(dir);
  const bg = (p) => p.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  const corner = (p) =>
    p.$eval("figure.chart canvas", (c) => Array.from(c.getContext("2d").getImageData(2, 2, 1, 1).data.slice(0, 3)));
  const t = await open(html, {
    colorScheme: "dark",
    init: () => document.addEventListener("DOMContentLoaded", () => { window.__themeAtDcl = document.documentElement.getAttribute("data-theme"); }),
  });
  try {
    assert.equal(await bg(t.page), "rgb(20, 22, 26)", "dark, as the system");
    assert.ok((await corner(t.page)).every((v) => v < 60), "charts drawn dark");
    await t.page.click("#theme");
    assert.equal(await t.page.getAttribute("html", "data-theme"), "light");
    assert.equal(await bg(t.page), "rgb(255, 255, 255)");
    await t.page.waitForFunction(() => {
      const c = document.querySelector("figure.chart canvas");
      return c.getContext("2d").getImageData(2, 2, 1, 1).data[0] > 200;
    });
    assert.equal(await t.page.evaluate(() => localStorage.getItem("inferlint-theme")), "light");
    await t.page.reload();
    await waitReady(t.page);
    assert.equal(await t.page.evaluate(() => window.__themeAtDcl), "light", "set before the page was parsed");
    assert.equal(await bg(t.page), "rgb(255, 255, 255)");
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("the keyboard reads a chart out: arrows, Shift for 10, Escape closes", async () => {
  const dir = copyRun(LIVE, "keys/live");
  const { report, html } = analyze(dir, ["--requested", "32"]);
  const chart = report.charts.requests || report.charts.kv;
  assert.ok(chart, "the run has a time chart");
  const t = await open(html);
  try {
    const canvas = `figure[data-chart="${chart.key}"] canvas`;
    const readout = `figure[data-chart="${chart.key}"] .readout`;
    await t.page.focus(canvas);
    await t.page.keyboard.press("ArrowRight");
    const secs = (x) => x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    assert.match(await t.page.textContent(readout), new RegExp(`^At ${secs(chart.t[0]).replace(".", "\\.")} s`));
    await t.page.keyboard.press("Shift+ArrowRight");
    const text = await t.page.textContent(readout);
    assert.match(text, new RegExp(`^At ${secs(chart.t[10]).replace(".", "\\.")} s`));
    for (const l of chart.lines) assert.ok(text.includes(`${l.label}: `), `${l.label} in “${text}”`);
    await t.page.keyboard.press("ArrowLeft");
    assert.match(await t.page.textContent(readout), new RegExp(`^At ${secs(chart.t[9]).replace(".", "\\.")} s`));
    await t.page.keyboard.press("Escape");
    assert.equal(await t.page.getAttribute(readout, "data-open"), "false");
    // Hovering reads out too.
    const box = await t.page.locator(canvas).boundingBox();
    await t.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    assert.match(await t.page.textContent(readout), /^At [\d,]+\.\d\d s/);
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

// ---- a sweep's phases ------------------------------------------------------------------------

test("a sweep shows one row per phase with its verdicts, and the charts name the phase", async () => {
  const dir = copyRun(path.join(ROOT, "fixtures/loadtools/recorded/guidellm-sweep-2-16"), "sweep");
  const { report, html } = analyze(dir);
  assert.equal(report.phases.length, 2, "two phases");
  const t = await open(html);
  try {
    await sameAsCommandLine(t.page, report);
    const rows = await t.page.$$eval("#phase-table tbody tr", (trs) =>
      trs.map((tr) => [
        tr.getAttribute("data-phase"),
        tr.querySelector(".asked").textContent,
        tr.querySelector(".ran").textContent,
        tr.getAttribute("data-status"),
        ...[...tr.querySelectorAll("td[data-tripwire]")].map((td) => `${td.getAttribute("data-tripwire")} ${td.getAttribute("data-status")}`),
      ]),
    );
    assert.deepEqual(
      rows,
      report.phases.map((p) => [String(p.index), p.asked, String(p.ran), p.status, ...p.checks.map((c) => `${c.id} ${c.status}`)]),
    );
    // What a capacity sweep asks: phase 1 ran what it asked for, phase 2 did not.
    assert.deepEqual(rows.map((r) => [r[1], r[2], r.find((c) => c.startsWith("T8 "))]), [
      ["2 at once", "2", "T8 pass"],
      ["16 at once", "10", "T8 fail"],
    ]);
    // Each phase check that needs attention, in full.
    const reasons = await t.page.$$eval("ul.phase-findings li", (els) =>
      els.map((e) => [e.getAttribute("data-phase"), e.getAttribute("data-tripwire"), e.querySelector(".message").textContent]),
    );
    const want = report.phases.flatMap((p) =>
      p.checks.filter((c) => ["fail", "warn", "unknown"].includes(c.status)).map((c) => [String(p.index), c.id, c.message]),
    );
    assert.deepEqual(reasons, want);
    // Reading the requests chart out in the middle of phase 2 names the phase.
    const chart = report.charts.requests;
    const p2 = report.phases[1];
    const mid = (p2.start_s + p2.end_s) / 2;
    const k = chart.t.reduce((best, x, i) => (Math.abs(x - mid) < Math.abs(chart.t[best] - mid) ? i : best), 0);
    await t.page.focus(`figure[data-chart="${chart.key}"] canvas`);
    await t.page.keyboard.press("ArrowRight");
    for (let i = 0; i < Math.floor(k / 10); i++) await t.page.keyboard.press("Shift+ArrowRight");
    for (let i = 0; i < k % 10; i++) await t.page.keyboard.press("ArrowRight");
    const text = await t.page.textContent(`figure[data-chart="${chart.key}"] .readout`);
    assert.ok(text.includes("phase 2: asked for 16 at once"), text);
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

// ---- the 24-hour recording ------------------------------------------------------------------

test("a 24-hour recording: one file of at most 3 MB that paints quickly", { timeout: 600_000 }, async () => {
  const dir = path.join(WORK, "long24");
  const gen = spawnSync("cargo", ["run", "--release", "-q", "-p", "viewer", "--example", "long_run", "--", dir], {
    cwd: ROOT,
    encoding: "utf8",
  });
  assert.equal(gen.status, 0, gen.stderr);
  const { report, html } = analyze(dir);
  const size = fs.statSync(html).size;
  const t0 = Date.now();
  const t = await open(html);
  try {
    const readyMs = Number(await t.page.getAttribute("html", "data-ready-ms"));
    console.log(`24-hour report: ${(size / 1e6).toFixed(2)} MB; first complete paint ${readyMs} ms after navigation (${Date.now() - t0} ms wall incl. browser start-up of the tab)`);
    assert.ok(size <= 3e6, `${size} bytes`);
    // The goal is 1.5 s (`cargo xtask first-paint` measures it); the bound only catches a
    // page that never paints.
    assert.ok(readyMs > 0 && readyMs < 10_000, `first complete paint after ${readyMs} ms`);
    await sameAsCommandLine(t.page, report);
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("the one-file report of vllm-0.28/live: size", async () => {
  const dir = copyRun(LIVE, "size/live");
  const { html } = analyze(dir, ["--requested", "32"]);
  console.log(`one-file report of ${path.basename(LIVE)}: ${(fs.statSync(html).size / 1024).toFixed(0)} KB`);
});

// ---- a fleet of replicas ---------------------------------------------------------------

const FLEET = path.join(ROOT, "fixtures/fleet/composed-unbalanced");

/** Copies a folder with its subfolders (a fleet's replicas/<id>/) into a fresh one. */
function copyTree(src, name) {
  const dst = path.join(WORK, name);
  fs.cpSync(src, dst, { recursive: true, filter: (p) => !/(results\.json|report\.html)$/.test(p) });
  return dst;
}

/** The replica table as the page shows it: [id, instance, {T1: status, …}, peak running]. */
async function replicaRows(page) {
  return page.$$eval("#replica-table tbody tr", (rows) =>
    rows.map((r) => {
      const cells = r.querySelectorAll("td");
      const statuses = Object.fromEntries(
        [...r.querySelectorAll("td[data-tripwire]")].map((c) => [c.getAttribute("data-tripwire"), c.getAttribute("data-status")]),
      );
      return [cells[0].textContent, cells[1].textContent, statuses, r.querySelector('[data-figure="peak_running"]').textContent];
    }),
  );
}

function expectedRows(report) {
  return report.replicas.map((r) => [
    r.id,
    r.instance ?? "?",
    Object.fromEntries(r.checks.filter((c) => ["T1", "T8", "T9", "T10", "T14"].includes(c.id)).map((c) => [c.id, c.status])),
    r.peak_running === null ? "?" : String(r.peak_running),
  ]);
}

test("a fleet's report shows its replicas side by side, and per-replica chart lines", async () => {
  const dir = copyTree(FLEET, "fleet/unbalanced");
  const { report, html } = analyze(dir);
  assert.equal(report.replicas.length, 2);
  const t = await open(html);
  try {
    assert.deepEqual(await replicaRows(t.page), expectedRows(report), "the replica table");
    const a = await t.page.$eval('#replica-table tr[data-replica="a"] td[data-tripwire="T1"]', (e) => e.getAttribute("data-status"));
    assert.equal(a, "fail");
    // The fleet's own verdicts in Results; each replica's under its own details.
    const fleet = await t.page.$$eval("#results li.finding[data-tripwire]", (els) => els.map((e) => [e.getAttribute("data-tripwire"), e.getAttribute("data-status")]).sort());
    assert.deepEqual(fleet, report.checks.map((c) => [c.id, c.status]).sort(), "fleet verdicts");
    for (const r of report.replicas) {
      const got = await t.page.$$eval(`details.replica[data-replica="${r.id}"] li.finding`, (els) => els.map((e) => [e.getAttribute("data-tripwire"), e.getAttribute("data-status")]).sort());
      assert.deepEqual(got, r.checks.map((c) => [c.id, c.status]).sort(), `replica ${r.id}'s verdicts`);
    }
    assert.deepEqual(report.charts.requests.lines.map((l) => l.key), ["running:a", "running:b", "running:all"]);
    await chartsDrawn(t.page, chartCount(report));
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

test("dropping a fleet folder walks its replicas/ subfolders", async () => {
  const dir = copyTree(FLEET, "fleet-drop/pool");
  const { report } = analyze(dir, [], path.join(WORK, "fleet-drop.html"));
  // The folder as a tree of entries: name → files and subfolders.
  const tree = (d) =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .filter((e) => e.name !== "report.html" && e.name !== "results.json")
      .map((e) =>
        e.isDirectory()
          ? { name: e.name, dir: tree(path.join(d, e.name)) }
          : { name: e.name, b64: fs.readFileSync(path.join(d, e.name)).toString("base64") },
      );
  const t = await open(PAGE);
  try {
    await t.page.evaluate((root) => {
      const toFile = (f) => new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name);
      const entry = (f, at) => {
        const fullPath = `${at}/${f.name}`;
        if (!f.dir) return { isFile: true, isDirectory: false, name: f.name, fullPath, file: (ok) => setTimeout(() => ok(toFile(f)), 0) };
        return {
          isFile: false,
          isDirectory: true,
          name: f.name,
          fullPath,
          createReader() {
            const batches = [f.dir.map((c) => entry(c, fullPath)), []];
            return { readEntries: (ok) => setTimeout(() => ok(batches.shift() || []), 0) };
          },
        };
      };
      const item = { kind: "file", type: "", webkitGetAsEntry: () => entry(root, ""), getAsFile: () => null };
      const ev = new Event("drop", { bubbles: true, cancelable: true });
      Object.defineProperty(ev, "dataTransfer", { value: { items: [item], files: [], types: ["Files"] } });
      document.getElementById("drop").dispatchEvent(ev);
    }, { name: "pool", dir: tree(dir) });
    await t.page.waitForSelector("#replica-table");
    await waitReady(t.page);
    assert.deepEqual(await replicaRows(t.page), expectedRows(report), "the replica table");
    noNetwork(t);
  } finally {
    await t.context.close();
  }
});

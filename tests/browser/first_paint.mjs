// Opens one-file reports in headless Chromium and prints, for each, its size, the time
// to first complete paint (`data-ready-ms`, set two frames after every chart drew) and
// where the time went (the viewer's `performance.mark`s: `inferlint:start` when the wasm
// runs, `inferlint:unpacked`, `inferlint:rows-read` (the series read from its columns),
// `inferlint:analyzed`, `inferlint:mounted`). A measurement,
// not a test: it asserts nothing about time. Run by `cargo xtask first-paint`.
//
//   node first_paint.mjs [--runs N] REPORT.html...
//
// Environment: CHROMIUM (default /usr/bin/chromium).

import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const args = process.argv.slice(2);
let runs = 3;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--runs") runs = Number(args[++i]);
  else files.push(args[i]);
}
if (files.length === 0 || !(runs > 0)) {
  console.error("usage: node first_paint.mjs [--runs N] REPORT.html...");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
});

/** One opening of `file` in a fresh context: the page's marks and its ready time. */
async function openOnce(file) {
  const context = await browser.newContext({ timezoneId: "UTC" });
  const page = await context.newPage();
  try {
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(
      () => ["ready", "failed"].includes(document.documentElement.getAttribute("data-state")),
      null,
      { timeout: 120_000 },
    );
    return await page.evaluate(() => {
      const marks = {};
      for (const m of performance.getEntriesByType("mark")) marks[m.name.replace("inferlint:", "")] = m.startTime;
      const nav = performance.getEntriesByType("navigation")[0];
      return {
        state: document.documentElement.getAttribute("data-state"),
        ready: Number(document.documentElement.getAttribute("data-ready-ms")),
        parsed: nav ? nav.domInteractive : NaN,
        marks,
      };
    });
  } finally {
    await context.close();
  }
}

const ms = (v) => (Number.isFinite(v) ? `${Math.round(v)}` : "-");
for (const file of files) {
  const size = fs.statSync(file).size;
  const all = [];
  for (let i = 0; i < runs; i++) all.push(await openOnce(file));
  const best = all.reduce((a, b) => (b.ready < a.ready ? b : a));
  const m = best.marks;
  console.log(`${file}: ${(size / 1e6).toFixed(2)} MB`);
  console.log(`  first complete paint: ${all.map((r) => ms(r.ready)).join(", ")} ms (best ${ms(best.ready)} ms; state ${best.state})`);
  console.log(
    `  best run, ms after navigation: html parsed ${ms(best.parsed)}, wasm started ${ms(m.start)}, unpacked ${ms(m.unpacked)}, analyzed ${ms(m.analyzed)}, mounted ${ms(m.mounted)}, ready ${ms(best.ready)}`,
  );
  console.log(
    `  best run, phases (ms): page and wasm load ${ms(m.start)}, unpack ${ms(m.unpacked - m.start)}, analyze ${ms(m.analyzed - m.unpacked)}${m["rows-read"] ? ` (rows ${ms(m["rows-read"] - m.unpacked)})` : ""}, build the page ${ms(m.mounted - m.analyzed)}, draw and paint ${ms(best.ready - m.mounted)}`,
  );
}
await browser.close();

// Takes the picture of a report the README shows: the one-file report of a run opened in
// headless Chromium and, once every chart has drawn, its verdicts and first chart saved as
// a PNG. Run by `cargo xtask screenshot`.
//
//   node screenshot.mjs REPORT.html OUT.png
//
// Environment: CHROMIUM (default /usr/bin/chromium).

import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [report, out] = process.argv.slice(2);
if (!report || !out) {
  console.error("usage: node screenshot.mjs REPORT.html OUT.png");
  process.exit(2);
}

const browser = await chromium.launch({
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
try {
  const context = await browser.newContext({
    timezoneId: "UTC",
    viewport: { width: 1280, height: 1100 },
    colorScheme: "light",
  });
  const page = await context.newPage();
  await page.goto(pathToFileURL(report).href);
  // `data-ready-ms` is set two frames after every chart drew; a failed start is an error.
  await page.waitForFunction(
    () =>
      document.documentElement.getAttribute("data-state") === "failed" ||
      document.documentElement.hasAttribute("data-ready-ms"),
    null,
    { timeout: 120_000 },
  );
  const state = await page.evaluate(() => document.documentElement.getAttribute("data-state"));
  if (state !== "ready") throw new Error(`the report did not start (state ${state})`);
  // From the verdicts to the end of the first chart: what the report says, and one of its
  // pictures of the run.
  const clip = await page.evaluate(() => {
    const top = document.querySelector("#results");
    const chart = document.querySelector("#charts figure.chart");
    if (!top || !chart) return null;
    const box = top.getBoundingClientRect();
    const y = box.top + window.scrollY - 16;
    const end = chart.getBoundingClientRect().bottom + window.scrollY + 16;
    return { x: Math.max(0, box.left - 24), y, width: box.width + 48, height: end - y };
  });
  if (!clip) throw new Error("the page has no #results or no chart in #charts: the viewer changed");
  await page.screenshot({ path: out, clip, fullPage: true });
  console.log(`screenshot: ${out}`);
} finally {
  await browser.close();
}

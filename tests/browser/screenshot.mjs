// Takes the picture of a report the README shows: the one-file report of a run opened in
// headless Chromium, its first screen saved as a PNG once every chart has drawn. Run by
// `cargo xtask screenshot`.
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
  await page.screenshot({ path: out });
  console.log(`screenshot: ${out}`);
} finally {
  await browser.close();
}

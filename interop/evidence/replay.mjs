// Opens an evidence bundle in ReplayWeb.page (the npm package, served by
// the Go test with the bundle on loopback) in Debian's Chromium, driven by
// playwright-core, and waits until the replayed page shows a text:
//   node replay.mjs <replaywebpage base URL> <bundle URL> <page URL> <14-digit ts> <text> [chromium path]
// Prints a JSON summary; exits 1 when the text does not appear in 60 s.
import { chromium } from "playwright-core";

const [base, bundle, pageURL, ts, text, exe = "/usr/bin/chromium"] = process.argv.slice(2);
if (!text) {
  console.error("usage: node replay.mjs <base> <bundle URL> <page URL> <ts> <text> [chromium]");
  process.exit(2);
}
const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
const summary = { found: false, frames: [] };
try {
  const page = await browser.newPage();
  const url = `${base}/index.html?source=${encodeURIComponent(bundle)}#view=replay&url=${encodeURIComponent(pageURL)}&ts=${ts}`;
  await page.goto(url);
  const deadline = Date.now() + 60_000;
  while (!summary.found && Date.now() < deadline) {
    for (const f of page.frames()) {
      if (!f.url().includes("mp_/")) continue;
      try {
        const body = await f.evaluate(() => document.body ? document.body.innerText : "");
        if (body.includes(text)) {
          summary.found = true;
          summary.frame = f.url();
          summary.excerpt = body.slice(0, 200);
          break;
        }
      } catch (e) {
        // the frame is navigating
      }
    }
    if (!summary.found) await new Promise((r) => setTimeout(r, 250));
  }
  summary.frames = page.frames().map((f) => f.url());
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
process.exit(summary.found ? 0 : 1);

// Walks the pages of examples/server as a person would, in Debian's
// Chromium driven by playwright-core, runs axe-core on every page visited
// and takes a screenshot of each:
//   node browse.mjs <base URL> <verification path> <order token> <screenshot dir> [chromium path]
// Prints a JSON summary (one entry per page: name, url, status, bytes,
// serious and critical axe violations, screenshot) on stdout; exits 1 when
// a step fails.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [base, verificationPath, orderToken, shots, exe = "/usr/bin/chromium"] = process.argv.slice(2);
if (!shots) {
  console.error("usage: node browse.mjs <base> <verification path> <order token> <screenshot dir> [chromium]");
  process.exit(2);
}
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const summary = { pages: [], steps: [], errors: [], consoleErrors: [] };
const browser = await chromium.launch({
  executablePath: exe,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

// visit records the page now shown: its size, axe's serious and critical
// violations, and a full-page screenshot.
async function visit(page, name, response) {
  const bytes = response ? (await response.body()).length : null;
  await page.evaluate(axeSource);
  const res = await page.evaluate(async () => await window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = res.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
  const file = join(shots, String(summary.pages.length + 1).padStart(2, "0") + "-" + name + ".png");
  await page.screenshot({ path: file, fullPage: true });
  summary.pages.push({ name, url: page.url(), status: response ? response.status() : null, bytes, violations: bad,
    minor: res.violations.filter((v) => !bad.some((b) => b.id === v.id)).map((v) => v.id + " (" + v.impact + ")"), screenshot: file, title: await page.title() });
}

function step(name, ok, detail) {
  summary.steps.push({ name, ok, detail });
  if (!ok) throw new Error(name + ": " + detail);
}

const text = (page) => page.evaluate(() => document.body.innerText);

try {
  const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
  const page = await context.newPage();
  // Console errors (a CSP refusal, a script error) fail the walk; the
  // status of an error page itself is expected, a failed stylesheet or
  // script is not.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) summary.consoleErrors.push(page.url() + ": " + m.text());
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && r.request().resourceType() !== "document") summary.consoleErrors.push(r.url() + ": HTTP " + r.status());
  });

  // 1. The landing page, then browse the catalogue.
  let resp = await page.goto(base + "/");
  await visit(page, "landing", resp);
  step("landing shows prices", /USD \d+\.\d\d/.test(await text(page)), "no price on the landing page");
  [resp] = await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "Browse the catalogue" }).click()]);
  await visit(page, "catalogue", resp);
  step("catalogue lists evaluations", (await page.locator("article.card").count()) > 0, "no evaluation listed");

  // 2. Search "landlord".
  await page.getByLabel("Search the catalogue").fill("landlord");
  [resp] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Search" }).click()]);
  await visit(page, "search-landlord", resp);
  const hits = await page.locator("article.card h2 a").count();
  step("search finds landlord evaluations", hits > 0 && /landlord/i.test(await text(page)), hits + " results");

  // 3. Open a preview.
  [resp] = await Promise.all([page.waitForNavigation(), page.locator("article.card h2 a").first().click()]);
  await visit(page, "preview", resp);
  const evaluationURL = page.url();
  step("preview offers the subscription", (await page.getByRole("button", { name: /Subscribe/ }).count()) === 1, "no subscribe button");
  step("preview hides the full evaluation", !(await text(page)).includes("Solution hypothesis"), "the preview shows the hypothesis");

  // 4. Subscribe through the development checkout; the success page signs in.
  [resp] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: /Subscribe/ }).click()]);
  await visit(page, "dev-checkout", resp);
  [resp] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: /Confirm subscription/ }).click()]);
  await visit(page, "subscribed", resp);
  step("checkout signs in", (await text(page)).includes("You are signed in in this browser"), "not signed in");
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === "assay_session");
  step("session cookie is HttpOnly and SameSite=Lax", !!session && session.httpOnly && session.sameSite === "Lax", JSON.stringify(session));

  // 5. Read the full evaluation, follow a signal to its captured page.
  resp = await page.goto(evaluationURL);
  await visit(page, "full-evaluation", resp);
  const full = await text(page);
  step("full evaluation shows scores with rationale", full.includes("Solution hypothesis") && full.includes("Rationale") && full.includes("Review:"), "not the full evaluation");
  step("signals show capture status and hashes", full.includes("Capture: captured") && full.includes("raw SHA-256"), "no capture details");
  [resp] = await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "Captured page" }).first().click()]);
  await visit(page, "signal-capture", resp);
  step("captured page marks the quote", (await page.locator("mark").count()) > 0, "no marked quote");

  // The same list on a phone, in the dark colour scheme.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: "dark", isMobile: true });
  const pp = await phone.newPage();
  resp = await pp.goto(base + new URL(evaluationURL).pathname.replace(/\/[^/]+$/, ""));
  await visit(pp, "catalogue-phone-dark", resp);
  const overflow = await pp.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  step("phone width has no horizontal scroll", overflow <= 0, overflow + " px wider");
  await phone.close();

  // 6. Sign out.
  resp = await page.goto(base + new URL(evaluationURL).pathname.replace(/\/browse\/[^/]+$/, "/account"));
  await visit(page, "account", resp);
  [resp] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Sign out" }).click()]);
  await visit(page, "signed-out", resp);
  step("signed out", (await text(page)).includes("You are signed out"), "no sign-out notice");
  resp = await page.goto(evaluationURL);
  step("after sign-out the preview again", !(await text(page)).includes("Solution hypothesis"), "still full");

  // The free searches run out (searches that find something count; the
  // walk made one): a page says when they come back and how to search
  // more.
  const searchPath = new URL(evaluationURL).pathname.replace(/\/browse\/[^/]+$/, "/browse/search?q=landlord");
  for (let i = 0; i < 10; i++) {
    resp = await page.goto(base + searchPath);
    if (resp.status() !== 200) break;
  }
  await visit(page, "search-quota-used", resp);
  step("quota page", resp.status() === 429 && (await text(page)).includes("free searches of today"), String(resp.status()));

  // 7. The verification paid by the Go client: the order token form,
  // then the page; its receipt is checked in the page.
  resp = await page.goto(base + verificationPath);
  await visit(page, "verification-token-form", resp);
  await page.getByLabel("Order token").fill(orderToken);
  [resp] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Open the verification" }).click()]);
  await page.waitForFunction(() => document.getElementById("receipt-status")?.dataset.result, null, { timeout: 15000 });
  const receipt = await page.evaluate(() => ({ result: document.getElementById("receipt-status").dataset.result, text: document.getElementById("receipt-status").textContent }));
  summary.receipt = receipt;
  await visit(page, "verification", resp);
  step("receipt checked in the page", receipt.result === "valid", receipt.text);
  const counted = await page.locator("ul.evidence li.counted").count();
  step("evidence says what counted", counted > 0, counted + " counted items");
  const capture = page.getByRole("link", { name: /Captured page, quote marked/ }).first();
  if (await capture.count()) {
    [resp] = await Promise.all([page.waitForNavigation(), capture.click()]);
    await visit(page, "verification-capture", resp);
    step("verification capture marks the quote", (await page.locator("mark").count()) > 0, "no marked quote");
  }
  // An unknown page is a page, not JSON, for a browser.
  resp = await page.goto(evaluationURL.replace(/niche_[0-9a-f]+/, "niche_00000000000000000000000000000000"));
  await visit(page, "not-found", resp);
  step("errors are pages", resp.status() === 404 && (resp.headers()["content-type"] || "").startsWith("text/html"), String(resp.status()));
} catch (e) {
  summary.errors.push(String(e && e.stack || e));
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
const failed = summary.errors.length > 0 || summary.pages.some((p) => p.violations.length > 0);
process.exit(failed ? 1 : 0);

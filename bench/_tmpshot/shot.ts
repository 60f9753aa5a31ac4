import { chromium } from "playwright-core";
const token = Deno.readTextFileSync("/tmp/exp/inv/token").trim();
const url = Deno.readTextFileSync("/tmp/exp/inv/url").trim();
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: { Authorization: `Bearer ${token}` } });
const pages: [string, string][] = [["find", url], ["runs", "http://127.0.0.1:8788/runs"], ["health", "http://127.0.0.1:8788/traces/health"], ["home", "http://127.0.0.1:8788/"]];
for (const [name, u] of pages) {
  const r = await page.goto(u);
  console.log(name, r?.status(), await page.title());
  await page.screenshot({ path: `/tmp/exp/inv/${name}.png`, fullPage: false });
}
// click "Inspect that answer"
await page.goto(url);
const link = page.getByRole("link", { name: /inspect/i }).first();
console.log("inspect link", await link.count());
if (await link.count()) { await link.click(); await page.waitForLoadState(); console.log("inspect", page.url(), await page.title()); await page.screenshot({ path: `/tmp/exp/inv/inspect.png`, fullPage: false }); }
await browser.close();

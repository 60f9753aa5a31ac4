/// <reference lib="dom" />
/** The browser script's run-page parts on a fixture page: live progress text, and a finding highlighting its samples. */

import assert from "node:assert/strict";
import { browserTest } from "./_harness.ts";
import { withScriptFixture } from "./_page.ts";

const FIXTURE = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><script src="/app.js" defer></script></head><body>
<p data-live-url="/state.json" data-live-state="running" data-live-interval="100">
<span id="requests" data-live-text="progress.requests">0</span>
<span id="words" data-live-text="progress_text.status">starting</span></p>
<ol><li id="finding-1" data-samples="1 2"><span class="finding__number">F1</span>
<a id="link" href="#sample-1" data-samples="1 2">samples #1–#2</a></li>
<li id="finding-2" data-samples="0"><span class="finding__number">F2</span></li></ol>
<svg id="timeline"><rect data-sample="0"/><rect data-sample="1"/><rect data-sample="2"/></svg>
<table><tbody><tr id="sample-0" data-sample="0"><td>0</td></tr>
<tr id="sample-1" data-sample="1"><td>1</td></tr><tr id="sample-2" data-sample="2"><td>2</td></tr></tbody></table>
<div id="announce" aria-live="polite"></div>
</body></html>`;

/** The fixture with a running job whose progress grows with each poll. */
function withFixture(fn: (origin: string) => Promise<void>): Promise<void> {
  return withScriptFixture(FIXTURE, (polls) => ({
    state: "running",
    progress: { requests: polls * 4 },
    progress_text: { status: `sample #${polls}` },
  }), fn);
}

browserTest(
  "a running job's progress updates in place from the twin",
  async (kit) => {
    await withFixture(async (origin) => {
      const { page } = await kit.open();
      await page.goto(`${origin}/`);
      await page.waitForFunction(() =>
        Number(document.getElementById("requests")!.textContent) >= 8
      );
      assert.match(
        await page.locator("#words").textContent() ?? "",
        /^sample #\d+$/,
      );
    });
  },
);

browserTest(
  "a click on a finding highlights exactly its samples, and the next finding moves the highlight",
  async (kit) => {
    await withFixture(async (origin) => {
      const { page } = await kit.open();
      await page.goto(`${origin}/`);
      const highlighted = () =>
        page.evaluate(() =>
          [...document.querySelectorAll(".is-highlighted")].map((e) =>
            `${e.tagName.toLowerCase()}:${e.getAttribute("data-sample")}`
          ).sort()
        );
      await page.locator("#link").click();
      assert.deepEqual(await highlighted(), [
        "rect:1",
        "rect:2",
        "tr:1",
        "tr:2",
      ]);
      assert.equal(
        new URL(page.url()).hash,
        "",
        "the script kept the page in place",
      );
      await page.locator("#finding-2").click();
      assert.deepEqual(await highlighted(), ["rect:0", "tr:0"]);
      assert.match(
        await page.locator("#finding-2").getAttribute("class") ?? "",
        /is-selected/,
      );
      assert.doesNotMatch(
        await page.locator("#finding-1").getAttribute("class") ?? "",
        /is-selected/,
      );
    });
  },
);

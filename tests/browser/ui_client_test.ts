/// <reference lib="dom" />
/** The browser script on a fixture page: table filters kept in the URL, keyboard navigation and its hints, live refresh. */

import assert from "node:assert/strict";
import { raw } from "hono/html";
import { SCRIPT_PATH, STYLE_PATH } from "../../routes/ui/assets.ts";
import { Layout } from "../../routes/ui/layout.tsx";
import { STYLESHEET } from "../../routes/ui/_client_bundle.ts";
import { browserTest } from "./_harness.ts";
import { withScriptFixture } from "./_page.ts";

const FIXTURE = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><script src="/app.js" defer></script></head><body>
<div data-filter-box hidden><label for="f">Filter rows</label>
<input type="search" id="f" data-filter="runs" hidden></div>
<table id="runs"><tbody>
<tr data-nav-item><td>run-a</td><td>PASS</td></tr>
<tr data-nav-item><td>run-b</td><td>FAIL</td></tr>
<tr data-nav-item><td>run-c</td><td>FAIL</td></tr>
</tbody></table>
<p id="live" data-live-url="/state.json" data-live-state="running" data-live-interval="100">Running</p>
<div id="announce" aria-live="polite"></div>
</body></html>`;

/** The fixture with a state that turns `done` after `flipAfter` polls. */
function withFixture(
  flipAfter: number,
  fn: (origin: string, polls: () => number) => Promise<void>,
): Promise<void> {
  return withScriptFixture(
    FIXTURE,
    (polls) => ({ state: polls > flipAfter ? "done" : "running" }),
    fn,
  );
}

browserTest(
  "the filter box shows, hides rows, keeps its text in the URL and restores it",
  async (kit) => {
    await withFixture(1_000_000, async (origin) => {
      const { page } = await kit.open();
      await page.goto(`${origin}/`);
      const filter = page.getByLabel("Filter rows");
      await filter.waitFor({ state: "visible" });
      await filter.fill("fail");
      assert.deepEqual(
        await page.locator("#runs tbody tr:visible td:first-child")
          .allTextContents(),
        ["run-b", "run-c"],
      );
      assert.equal(new URL(page.url()).searchParams.get("q"), "fail");
      await page.reload();
      assert.equal(await page.getByLabel("Filter rows").inputValue(), "fail");
      assert.equal(await page.locator("#runs tbody tr:visible").count(), 2);
      await page.getByLabel("Filter rows").press("Escape");
      assert.equal(await page.locator("#runs tbody tr:visible").count(), 3);
      assert.equal(new URL(page.url()).search, "");
    });
  },
);

browserTest(
  "/ focuses the filter; j and k move through the rows",
  async (kit) => {
    await withFixture(1_000_000, async (origin) => {
      const { page } = await kit.open();
      await page.goto(`${origin}/`);
      await page.getByLabel("Filter rows").waitFor({ state: "visible" });
      const focusedText = () =>
        page.evaluate(() => document.activeElement?.textContent ?? "");
      await page.keyboard.press("j");
      assert.match(await focusedText(), /run-a/);
      await page.keyboard.press("j");
      await page.keyboard.press("j");
      await page.keyboard.press("j");
      assert.match(await focusedText(), /run-c/, "stops at the last row");
      await page.keyboard.press("k");
      assert.match(await focusedText(), /run-b/);
      await page.keyboard.press("/");
      assert.equal(
        await page.evaluate(() => document.activeElement?.id),
        "f",
      );
      await page.keyboard.press("j");
      assert.equal(await page.getByLabel("Filter rows").inputValue(), "j");
    });
  },
);

browserTest(
  "a live element reloads the page when its twin's state changes",
  async (kit) => {
    await withFixture(2, async (origin, polls) => {
      const { page } = await kit.open();
      await page.goto(`${origin}/`);
      await page.waitForEvent("load", { timeout: 5000 });
      assert.ok(polls() >= 3, `polled ${polls()} times before the reload`);
    });
  },
);

/** The real page shell around `body`, loading the script from the fixture's `/app.js`. */
async function shellAround(body: string): Promise<string> {
  const page = Layout({
    frame: {
      title: "Fixture",
      path: "/",
      principal: { name: "token", role: "admin", scope: {}, via: "bearer" },
      csrf: null,
      site: { version: "0.0.0", dataLocation: "/tmp/trace.db", dataFlags: "" },
    },
    children: raw(body),
  });
  return `<!DOCTYPE html>${await page}`.replace(SCRIPT_PATH, "/app.js")
    .replace(STYLE_PATH, "/style.css");
}

browserTest(
  "the footer shows the hint of each key only where that key acts",
  async (kit) => {
    const table = `<table id="runs"><tbody>
<tr data-nav-item><td>run-a</td></tr><tr data-nav-item><td>run-b</td></tr>
</tbody></table>`;
    const filter =
      `<div data-filter-box hidden><label for="f">Filter rows</label>
<input type="search" id="f" data-filter="runs" hidden></div>`;
    const cases: [string, string, string | null][] = [
      ["filter and rows", filter + table, "Keys: / filter j k move"],
      ["rows only", table, "Keys: j k move"],
      ["neither", "<p>Nothing to move through.</p>", null],
    ];
    for (const [name, body, hint] of cases) {
      await withScriptFixture(
        await shellAround(body),
        () => ({}),
        async (origin) => {
          const { page } = await kit.open();
          await page.goto(`${origin}/`);
          await page.waitForFunction(() =>
            document.documentElement.classList.contains("js")
          );
          const shortcuts = page.locator(".shortcuts");
          if (hint === null) {
            assert.equal(await shortcuts.isVisible(), false, name);
          } else {
            assert.equal(
              (await shortcuts.innerText()).replace(/\s+/g, " ").trim(),
              hint,
              name,
            );
          }
        },
      );
    }
  },
);

browserTest(
  "a filter that matches no row says so in the table, and its button clears the filter",
  async (kit) => {
    const html = FIXTURE.replace(
      '<table id="runs"><tbody>',
      '<table id="runs"><thead><tr><th>Run</th><th>Verdict</th></tr></thead><tbody>',
    ).replace(
      'data-filter="runs"',
      'data-filter="runs" data-filter-noun="run"',
    );
    await withScriptFixture(
      html,
      () => ({ state: "running" }),
      async (origin) => {
        const { page } = await kit.open();
        await page.goto(`${origin}/`);
        const filter = page.getByLabel("Filter rows");
        await filter.waitFor({ state: "visible" });
        await filter.fill("nothing-like-this");
        assert.equal(await page.locator("#runs tbody tr:visible").count(), 0);
        const empty = page.locator("#runs tr[data-filter-empty]");
        assert.equal(
          (await empty.innerText()).replace(/\s+/g, " ").trim(),
          "No run matches “nothing-like-this”. Clear the filter",
        );
        assert.equal(await empty.locator("td").getAttribute("colspan"), "2");
        await page.getByRole("button", { name: "Clear the filter" }).click();
        assert.equal(await page.locator("#runs tbody tr:visible").count(), 3);
        assert.equal(await empty.isVisible(), false);
        assert.equal(await filter.inputValue(), "");
        assert.equal(
          await page.evaluate(() => document.activeElement?.id),
          "f",
          "the filter has the focus back",
        );
        assert.equal(new URL(page.url()).search, "");
        // A shared URL that matches nothing opens with the row shown.
        await page.goto(`${origin}/?q=zzz`);
        await empty.waitFor({ state: "visible" });
        await filter.fill("run-b");
        assert.equal(await empty.isVisible(), false);
      },
    );
  },
);

for (const scheme of ["light", "dark"] as const) {
  browserTest(
    `a disabled field looks off beside an enabled one in ${scheme} mode`,
    async (kit) => {
      const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><style>${STYLESHEET}</style></head><body>
<input type="text" id="on"><input type="text" id="off" disabled>
<input type="search" id="search-off" disabled>
<textarea id="area-off" disabled></textarea><select id="select-off" disabled></select>
</body></html>`;
      await withScriptFixture(html, () => ({}), async (origin) => {
        const { page } = await kit.open({ colorScheme: scheme });
        await page.goto(`${origin}/`);
        const look = (id: string) =>
          page.evaluate((id) => {
            const style = getComputedStyle(document.getElementById(id)!);
            return {
              background: style.backgroundColor,
              border: style.borderTopStyle,
            };
          }, id);
        const on = await look("on");
        for (const id of ["off", "search-off", "area-off", "select-off"]) {
          const off = await look(id);
          assert.notEqual(off.background, on.background, `${id} background`);
          assert.equal(off.border, "dashed", `${id} border`);
        }
      });
    },
  );
}

/// <reference lib="dom" />
/**
 * The run pages in a real browser: from the overview to a FAIL from the
 * demo app (timeline, a finding's samples highlighted, cleanup), compare,
 * the reference dashboard, starting a run and watching it finish, the
 * refusal of a second start, a cross-site POST, and every page's layout on
 * a desktop and a phone without JavaScript errors.
 */

import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { RunReport } from "../../lib/runner/report.ts";
import {
  browserTest,
  checkLayout,
  screenshot,
  scrollsHorizontally,
  VIEWPORTS,
} from "./_harness.ts";
import { submitFromAnotherSite } from "./_page.ts";
import { ADMIN_TOKEN } from "./_server.ts";
import { registerNamedTarget } from "../../lib/runs/mod.ts";
import {
  demoConfig,
  failThenFixed,
  interruptedCheckpoint,
  referenceRuns,
  withDemoTarget,
  withRunsFixture,
} from "./_runs.ts";

/** Whether `selector`'s first match lies entirely inside the first screen. */
async function onFirstScreen(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  const height = page.viewportSize()!.height;
  return box !== null && box.y >= 0 && box.y + box.height <= height;
}

/**
 * The elements of the page's main content that scroll sideways inside
 * themselves (text blocks such as commands and raw JSON aside, which keep
 * their lines): on a phone a run page's tables stack and its chart scales,
 * so there should be none.
 */
async function sidewaysScrollers(page: Page): Promise<string[]> {
  return await page.evaluate(() =>
    [...document.querySelectorAll("main *")].filter((element) => {
      if (element.closest("pre")) return false;
      const overflow = getComputedStyle(element).overflowX;
      return (overflow === "auto" || overflow === "scroll") &&
        element.scrollWidth > element.clientWidth + 1;
    }).map((element) =>
      `${element.tagName.toLowerCase()}.${element.className} (${element.scrollWidth} > ${element.clientWidth})`
    )
  );
}

browserTest(
  "overview → a FAIL from the demo app: timeline drawn, a finding highlights its samples, cleanup says what is left",
  async (kit) => {
    let fail: RunReport | null = null;
    await withRunsFixture({
      listen: true,
      seed: async (db, dataDir) => {
        ({ fail } = await failThenFixed(db, dataDir));
        await referenceRuns(db, ["correct", "stale-cache"]);
      },
    }, async (server) => {
      const run = fail!;
      const desktop = await kit.open();
      const { page } = desktop;
      await page.goto(server.loginUrl);
      assert.equal(await page.locator("h1").textContent(), "Overview");
      await page.getByText(
        "The 1 enforced regression passed its latest replay",
      )
        .waitFor();
      await checkLayout(desktop.page, "runs-overview-desktop");
      await page.locator(`#recent-runs a[href="/runs/${run.run_id}"]`).click();
      await page.waitForURL(`**/runs/${run.run_id}`);
      assert.equal(
        await page.locator(".page-head .badge--lg").textContent(),
        "FAIL",
      );
      assert.match(
        await page.locator(".verdict__reason").textContent() ?? "",
        /Deleted data was still there at the final sample/,
      );
      assert.ok(await onFirstScreen(page, ".page-head .badge--lg"));
      assert.ok(await onFirstScreen(page, "#finding-1 .finding__head"));

      // The timeline: one line per store, a column per sample, the window's end.
      assert.equal(await page.locator("#timeline path.line").count(), 3);
      const samples = run.samples.length;
      assert.equal(
        await page.locator("#timeline rect.sample-col").count(),
        samples,
      );
      assert.equal(await page.locator("#timeline .window-end").count(), 1);

      // A finding highlights exactly the samples that prove it.
      const cited = run.findings[1]!.sample_indexes;
      await page.locator("#finding-2").click();
      assert.equal(
        await page.locator("#timeline rect.sample-col.is-highlighted").count(),
        cited.length,
      );
      assert.equal(
        await page.locator("#samples-table tr.is-highlighted").count(),
        cited.length,
      );
      assert.match(
        await page.locator("#finding-2").getAttribute("class") ?? "",
        /is-selected/,
      );
      await page.locator("#cleanup").scrollIntoViewIfNeeded();
      assert.match(
        await page.locator("#cleanup").textContent() ?? "",
        /INCOMPLETE.*Synthetic records are still there/s,
      );
      assert.match(
        await page.locator("#cleanup").textContent() ?? "",
        new RegExp(`trace external-cleanup ${run.run_id}`),
      );
      await page.locator("#requests details.phase").first().waitFor();
      await checkLayout(desktop.page, "run-fail-desktop");

      const phone = await kit.openWithSession(desktop, {
        viewport: VIEWPORTS.mobile,
      });
      await phone.page.goto(`${server.origin}/runs/${run.run_id}`);
      assert.ok(await onFirstScreen(phone.page, ".page-head .badge--lg"));
      assert.ok(
        await onFirstScreen(phone.page, "#finding-1 .finding__head"),
        "the first finding starts on a phone's first screen",
      );
      // Nothing to scroll sideways: the tables stack, the timeline scales.
      assert.deepEqual(await sidewaysScrollers(phone.page), []);
      const timeline = await phone.page.locator("#timeline .chart__plot svg")
        .boundingBox();
      assert.ok(
        timeline && timeline.width <= VIEWPORTS.mobile.width,
        `the timeline fits (${timeline?.width} px)`,
      );
      const head = await phone.page.locator("#samples-table thead")
        .boundingBox();
      assert.ok(
        head && head.height <= 1,
        "the samples' header row gives way to labelled cells",
      );
      const label = await phone.page.locator(
        '#samples-table tbody tr[data-sample] td[data-label="source"]',
      ).first().evaluate((cell) => getComputedStyle(cell, "::before").content);
      assert.match(label, /source/, "each cell names its column");
      await checkLayout(phone.page, "run-fail-mobile");
    });
  },
);

browserTest(
  "compare: a failing run and its passing replay, findings fixed and both cleanups",
  async (kit) => {
    let ids: { fail: string; pass: string } | null = null;
    await withRunsFixture({
      listen: true,
      seed: async (db, dataDir) => {
        const { fail, pass } = await failThenFixed(db, dataDir);
        ids = { fail: fail.run_id, pass: pass.run_id };
      },
    }, async (server) => {
      const opened = await kit.open();
      const { page } = opened;
      await page.goto(server.loginUrl);
      await page.goto(`${server.origin}/regressions`);
      await page.getByRole("link", { name: "compare the two" }).first().click();
      await page.waitForURL(`**/compare?a=${ids!.fail}&b=${ids!.pass}`);
      assert.match(
        await page.locator(".verdict__reason").textContent() ?? "",
        /^FAIL before, PASS after: 2 findings fixed, 0 still present, 0 new\.$/,
      );
      assert.match(
        await page.locator(".notice").textContent() ?? "",
        /fresh synthetic data/,
      );
      const cleanup = await page.locator("#cleanup").textContent() ?? "";
      assert.match(cleanup, /A \(before\)\s*INCOMPLETE/);
      assert.match(cleanup, /B \(after\)\s*COMPLETE/);
      await checkLayout(opened.page, "compare-desktop");
      const phone = await kit.openWithSession(opened, {
        viewport: VIEWPORTS.mobile,
      });
      await phone.page.goto(page.url());
      await checkLayout(phone.page, "compare-mobile");
    });
  },
);

browserTest(
  "the reference dashboard: the matrix, the ranking and the assessed real systems",
  async (kit) => {
    await withRunsFixture({
      listen: true,
      seed: (db) => referenceRuns(db),
    }, async (server) => {
      const opened = await kit.open();
      const { page } = opened;
      await page.goto(server.loginUrl);
      await page.getByRole("link", { name: "Reference" }).click();
      await page.waitForURL("**/reference");
      assert.equal(
        await page.locator(".page-head .badge--lg").textContent(),
        "MATCH",
      );
      const rows = await page.locator("#reference-matrix tbody tr").count();
      assert.ok(rows >= 20, `${rows} systems in the matrix`);
      assert.equal(
        await page.locator("#reference-ranking tbody tr").count(),
        rows,
      );
      const assessed = await page.locator("#assessed").textContent() ?? "";
      assert.match(assessed, /recorded assessment/);
      assert.match(assessed, /Mem0 \(mem0ai 3\.3\.1, local\)/);
      assert.match(assessed, /2026-11-30/);
      assert.match(assessed, /no run of mem0-local in this ledger/);
      await checkLayout(opened.page, "reference-desktop");
      const phone = await kit.openWithSession(opened, {
        viewport: VIEWPORTS.mobile,
      });
      await phone.page.goto(`${server.origin}/reference`);
      await checkLayout(phone.page, "reference-mobile");
      // The assessment's write-up is a page of its own, readable on a phone.
      await phone.page.locator(
        "#assessed a[href='/reference/assessments/mem0']",
      )
        .click();
      await phone.page.waitForURL("**/reference/assessments/mem0");
      assert.match(
        await phone.page.locator("article.document h1").first().textContent() ??
          "",
        /^Mem0 \(mem0ai 3\.3\.1, local\): what Trace finds$/,
      );
      await checkLayout(phone.page, "assessment-mobile");
    });
  },
);

browserTest(
  "a run started from the target page shows live progress and ends on its result; a second start is refused naming it",
  async (kit) => {
    await withRunsFixture({ listen: true }, async (server) => {
      await withDemoTarget(
        server.db,
        "demo-staging",
        "stale-cache",
        async () => {
          const opened = await kit.open();
          const { page } = opened;
          await page.goto(server.loginUrl);
          await page.goto(`${server.origin}/targets/demo-staging`);
          await page.getByRole("button", { name: "Run the deletion contract" })
            .click();
          await page.waitForURL(/\/runs\/run-/);
          const runId = new URL(page.url()).pathname.split("/").pop()!;
          assert.equal(
            await page.locator(".page-head .badge--lg").textContent(),
            "RUNNING",
          );
          await page.locator("#progress [data-live-text]").first().waitFor();
          await screenshot(page, "run-running-desktop");
          // The whole live part follows the run, not only the progress
          // texts: the headline reaches the deletion window's samples while
          // the page is still the running one.
          await page.waitForFunction(
            () =>
              document.querySelector(".page-head .badge--lg")?.textContent ===
                "RUNNING" &&
              /Running, no verdict yet: [^.]*sample #\d+/.test(
                document.querySelector(".verdict__reason")?.textContent ?? "",
              ),
            undefined,
            { timeout: 30_000 },
          );
          assert.equal(
            await page.locator("#requests").getByText("This run's trace events")
              .count(),
            0,
            "no link to events the run has not written yet",
          );
          await screenshot(page, "run-running-window-desktop");

          // A second start while the first runs: refused, naming the running run.
          const other = await kit.openWithSession(opened);
          await other.page.goto(`${server.origin}/targets/demo-staging`);
          await other.page.getByText("is running: a new one is refused")
            .waitFor();
          const refused = other.page.waitForResponse((r) =>
            r.url().endsWith("/targets/demo-staging/run")
          );
          await other.page.getByRole("button", {
            name: "Run the deletion contract",
          })
            .click();
          assert.equal((await refused).status(), 409);
          await other.page.getByRole("heading", {
            name: "A run is already running",
          })
            .waitFor();
          assert.match(
            await other.page.locator(".notice").textContent() ?? "",
            new RegExp(`run ${runId} is still running`),
          );
          await other.page.getByRole("link", { name: `Watch run ${runId}` })
            .waitFor();
          other.allowed.push("status of 409");
          await screenshot(other.page, "run-refused-desktop");

          // The page reloads itself into the result once the run ends.
          await page.locator('.page-head .badge--lg:text("FAIL")').waitFor({
            timeout: 60_000,
          });
          assert.match(
            await page.locator(".verdict__reason").textContent() ?? "",
            /Deleted data was still there/,
          );
          assert.equal(server.jobs.active, null);
          await checkLayout(opened.page, "run-finished-desktop");
        },
        // Long enough that the first run still runs when a loaded machine
        // has opened the second page and clicked.
        { windowSeconds: 8 },
      );
    });
  },
);

browserTest(
  "a cross-site form cannot start a run",
  async (kit) => {
    await withRunsFixture({ listen: true }, async (server) => {
      await withDemoTarget(server.db, "demo-staging", null, async () => {
        const victim = await kit.open();
        await victim.page.goto(server.loginUrl);
        // Another site (another port is another origin) with a form aimed at Trace.
        const status = await submitFromAnotherSite(
          victim.page,
          `${server.origin}/targets/demo-staging/run`,
          "127.0.0.1",
        );
        assert.equal(status, 403);
        victim.allowed.push("status of 403");
        assert.equal(server.jobs.active, null, "no run was started");
        const runs = await (await server.app.request(
          `${server.origin}/runs.json`,
          {
            headers: {
              host: new URL(server.origin).host,
              authorization: `Bearer ${ADMIN_TOKEN}`,
            },
          },
        )).json();
        assert.equal(runs.total, 0);
      });
    });
  },
);

browserTest(
  "every run page lays out on a desktop and a phone without JavaScript errors",
  async (kit) => {
    let ids: { fail: string; pass: string; interrupted: string } | null = null;
    await withRunsFixture({
      listen: true,
      seed: async (db, dataDir) => {
        const { fail, pass } = await failThenFixed(db, dataDir);
        await referenceRuns(db);
        const interrupted = await interruptedCheckpoint(
          dataDir,
          "demo-staging",
        );
        ids = {
          fail: fail.run_id,
          pass: pass.run_id,
          interrupted: interrupted.run_id,
        };
      },
    }, async (server) => {
      const desktop = await kit.open();
      await desktop.page.goto(server.loginUrl);
      const phone = await kit.openWithSession(desktop, {
        viewport: VIEWPORTS.mobile,
      });
      const pages = {
        overview: "/",
        runs: "/runs",
        "runs-filtered": "/runs?verdict=FAIL&kind=external",
        "run-pass": `/runs/${ids!.pass}`,
        "run-interrupted": `/runs/${ids!.interrupted}`,
        targets: "/targets",
        target: "/targets/demo-staging",
        regressions: "/regressions",
        "compare-empty": "/compare",
        compare: `/compare?a=${ids!.fail}&b=${ids!.pass}`,
      };
      for (const [name, path] of Object.entries(pages)) {
        for (
          const [size, opened] of [["desktop", desktop], [
            "mobile",
            phone,
          ]] as const
        ) {
          const response = await opened.page.goto(`${server.origin}${path}`);
          assert.equal(response?.status(), 200, path);
          if (size === "mobile") {
            assert.deepEqual(await sidewaysScrollers(opened.page), [], path);
          }
          await checkLayout(opened.page, `page-${name}-${size}`);
        }
      }
      // The interrupted run never reads PASS.
      await desktop.page.goto(`${server.origin}/runs/${ids!.interrupted}`);
      assert.equal(
        await desktop.page.locator(".page-head .badge--lg").textContent(),
        "INCONCLUSIVE",
      );
      // Dark: the same page in the system's dark theme.
      const dark = await kit.openWithSession(desktop, { colorScheme: "dark" });
      await dark.page.goto(`${server.origin}/runs/${ids!.fail}`);
      await dark.page.locator("#finding-1").click();
      await checkLayout(dark.page, "run-fail-desktop-dark");
      // The keyboard reaches the findings.
      await desktop.page.goto(`${server.origin}/runs/${ids!.fail}`);
      await desktop.page.keyboard.press("j");
      assert.equal(
        await desktop.page.evaluate(() => document.activeElement?.id),
        "finding-1",
      );
    });
  },
);

/** How many lines each element matching `selector` takes, in document order. */
async function linesOf(page: Page, selector: string): Promise<number[]> {
  return await page.locator(selector).evaluateAll((elements) =>
    elements.map((element) => {
      const tops = [...element.getClientRects()].map((r) => Math.round(r.top));
      return new Set(tops).size;
    })
  );
}

browserTest(
  "the runs list fits a laptop's width: long target ids wrap between their words, run ids stay whole on a wide screen",
  async (kit) => {
    await withRunsFixture({
      listen: true,
      // The reference systems' target ids are the longest a list shows.
      seed: (db) => referenceRuns(db),
    }, async (server) => {
      const wide = await kit.open({ viewport: { width: 1280, height: 800 } });
      await wide.page.goto(server.loginUrl);
      const laptop = await kit.openWithSession(wide, {
        viewport: { width: 1024, height: 768 },
      });
      for (const [width, opened] of [[1280, wide], [1024, laptop]] as const) {
        for (const path of ["/runs", "/"]) {
          await opened.page.goto(`${server.origin}${path}`);
          assert.deepEqual(
            await sidewaysScrollers(opened.page),
            [],
            `${path} at ${width} px`,
          );
          assert.equal(await scrollsHorizontally(opened.page), false);
        }
        await opened.page.goto(`${server.origin}/runs`);
        const targets = opened.page.locator(
          "#runs-table td[data-label=Target]",
        );
        assert.ok(
          (await targets.allTextContents()).includes(
            "reference-trace-index-skips-previews",
          ),
          "the id reads whole in the page's text",
        );
        assert.ok(
          Math.max(...await linesOf(opened.page, "#runs-table td code")) > 1,
          `a long target id wraps at ${width} px`,
        );
        const runLines = await linesOf(opened.page, "#runs-table th a");
        assert.ok(
          runLines.every((n) => n <= (width === 1280 ? 1 : 2)),
          `run ids at ${width} px: ${runLines}`,
        );
        await screenshot(opened.page, `runs-${width}`);
      }
    });
  },
);

browserTest(
  "the regressions list fits a laptop's width: its Replay button shows without scrolling the table",
  async (kit) => {
    let target = "";
    await withRunsFixture({
      listen: true,
      // As long as the id `trace external-run --config` registers.
      seed: async (db, dataDir) => {
        target = "acme-rag-staging";
        await failThenFixed(db, dataDir, target);
      },
    }, async (server) => {
      const wide = await kit.open({ viewport: { width: 1280, height: 800 } });
      await wide.page.goto(server.loginUrl);
      const laptop = await kit.openWithSession(wide, {
        viewport: { width: 1024, height: 768 },
      });
      for (const [width, opened] of [[1280, wide], [1024, laptop]] as const) {
        for (const path of ["/regressions", `/targets/${target}`]) {
          await opened.page.goto(`${server.origin}${path}`);
          assert.deepEqual(
            await sidewaysScrollers(opened.page),
            [],
            `${path} at ${width} px`,
          );
          const replay = opened.page.getByRole("button", { name: "Replay" });
          const box = await replay.boundingBox();
          assert.ok(
            box !== null && box.x + box.width <= width,
            `the Replay button of ${path} at ${width} px ends at ${
              box && box.x + box.width
            }`,
          );
          const ids = await opened.page.locator(
            "td[data-label='Saved from'] a, th[scope=row] code",
          ).allTextContents();
          assert.ok(
            ids.length === 2 &&
              ids.every((id) => /^(run|reg)-\d{8}T\d{6}Z-[0-9a-f]+$/.test(id)),
            `ids read whole in the page's text: ${ids}`,
          );
        }
      }
    });
  },
);

browserTest(
  "the compare form's button lines up with the two run fields it sends, and a run id fits them on a phone",
  async (kit) => {
    await withRunsFixture({ listen: true }, async (server) => {
      const opened = await kit.open();
      await opened.page.goto(server.loginUrl);
      for (const path of ["/compare", "/compare?a=run-x&b="]) {
        await opened.page.goto(`${server.origin}${path}`);
        const box = (selector: string) =>
          opened.page.locator(`form[action="/compare"] ${selector}`)
            .boundingBox();
        const button = await box("button[type=submit]");
        for (const input of ["#compare-a", "#compare-b"]) {
          const field = await box(input);
          assert.ok(button && field, `${path}: ${input} and the button`);
          assert.ok(
            Math.abs(button.y - field.y) <= 1 &&
              Math.abs(button.height - field.height) <= 1,
            `${path}: the button (${button.y}+${button.height}) beside ${input} (${field.y}+${field.height})`,
          );
        }
      }
      opened.allowed.push("status of 400");
      // A whole run id fits its field on phones, the narrowest included.
      const id = "run-20261202T113454Z-438e5e34f1a9";
      for (const width of [390, 360, 320]) {
        const phone = await kit.openWithSession(opened, {
          viewport: { width, height: 800 },
        });
        await phone.page.goto(`${server.origin}/compare?a=${id}&b=${id}`);
        const overflow = await phone.page.locator("#compare-a").evaluate((
          input,
        ) => input.scrollWidth - input.clientWidth);
        assert.equal(overflow, 0, `at ${width} px the id overflows its field`);
        phone.allowed.push("status of 404");
      }
    });
  },
);

browserTest(
  "at tablet and small-laptop widths the run pages' tables stack instead of scrolling inside their box",
  async (kit) => {
    let runId = "";
    await withRunsFixture({
      listen: true,
      seed: async (db, dataDir) => {
        runId = (await failThenFixed(db, dataDir)).fail.run_id;
        await referenceRuns(db);
      },
    }, async (server) => {
      const first = await kit.open({ viewport: { width: 900, height: 800 } });
      await first.page.goto(server.loginUrl);
      const tablet = await kit.openWithSession(first, {
        viewport: { width: 768, height: 1024 },
      });
      for (const [width, opened] of [[900, first], [768, tablet]] as const) {
        for (const path of ["/runs", "/", `/runs/${runId}`]) {
          await opened.page.goto(`${server.origin}${path}`);
          assert.deepEqual(
            await sidewaysScrollers(opened.page),
            [],
            `${path} at ${width} px`,
          );
        }
      }
    });
  },
);

browserTest(
  "the targets filter says when no target matches and clears with one click, on a desktop and a phone",
  async (kit) => {
    await withRunsFixture({
      listen: true,
      seed: async (db) => {
        for (let i = 1; i <= 9; i++) {
          await registerNamedTarget(
            db,
            `staging-${i}`,
            demoConfig(`http://127.0.0.1:${9000 + i}`),
          );
        }
      },
    }, async (server) => {
      const desktop = await kit.open();
      await desktop.page.goto(server.loginUrl);
      const phone = await kit.openWithSession(desktop, {
        viewport: VIEWPORTS.mobile,
      });
      for (
        const [name, { page }] of [["desktop", desktop], [
          "mobile",
          phone,
        ]] as const
      ) {
        await page.goto(`${server.origin}/targets`);
        const filter = page.getByLabel("Filter rows");
        await filter.fill("no-such-target");
        const empty = page.locator("#targets-table tr[data-filter-empty]");
        await empty.waitFor({ state: "visible" });
        assert.match(
          await empty.innerText(),
          /No target matches “no-such-target”\./,
        );
        await checkLayout(page, `targets-filter-empty-${name}`);
        await page.getByRole("button", { name: "Clear the filter" }).click();
        assert.equal(
          await page.locator("#targets-table tbody tr:visible").count(),
          9,
        );
        assert.equal(await empty.isVisible(), false);
      }
    });
  },
);

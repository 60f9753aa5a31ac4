/// <reference lib="dom" />
/** The trace pages in a real browser: search and navigation round trips, lineage and selection, filters, a legacy trace, the busy overview, layout, and a stale answer traced from a deletion run to its cache entry. */

import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { TraceDb } from "../../lib/db.ts";
import { ingestEvents } from "../../lib/obs/ingest/mod.ts";
import { runEvidenceHref } from "../../routes/ui/trace_params.ts";
import {
  browserTest,
  checkLayout,
  type OpenPage,
  screenshot,
  scrollsHorizontally,
  VIEWPORTS,
} from "./_harness.ts";
import { withUiServer } from "./_server.ts";
import {
  INCIDENT,
  LEGACY,
  runStaleCache,
  seedBusyThreads,
  seedIncident,
  seedLegacy,
} from "./_trace_fixtures.ts";

async function seedAll(db: TraceDb): Promise<void> {
  await seedBusyThreads(db);
  await seedIncident(db);
  await seedLegacy(db);
}

/** Signs a fresh page in through the one-time login URL. */
async function signedIn(opened: OpenPage, loginUrl: string): Promise<Page> {
  await opened.page.goto(loginUrl);
  return opened.page;
}

/** Top of `selector` in page coordinates. */
async function topOf(page: Page, selector: string): Promise<number> {
  return await page.locator(selector).first().evaluate((el) =>
    el.getBoundingClientRect().top + globalThis.scrollY
  );
}

browserTest(
  "a search, an inspection and the way back keep the selected event",
  async (kit) => {
    await withUiServer({ seed: seedAll }, async (server) => {
      const page = await signedIn(await kit.open(), server.loginUrl);
      await page.goto(`${server.origin}/traces/find`);
      await page.getByLabel(/^Exact id/).fill(INCIDENT.thread_id);
      await page.getByRole("button", { name: "Find" }).click();
      await page.waitForURL(/q=thread-incident/);
      // Empty form fields stay out of the URL.
      assert.ok(!page.url().includes("application_id="), page.url());
      await page.getByRole("link", { name: INCIDENT.selection_event }).click();
      await page.waitForURL(/\/traces\/inspect\?/);
      const inspected = new URL(page.url());
      assert.equal(
        inspected.searchParams.get("selected"),
        INCIDENT.selection_event,
      );
      assert.equal(inspected.searchParams.get("agent_id"), INCIDENT.agent_id);
      await page.locator(".wf-row.is-selected").getByText(
        INCIDENT.selection_event,
      ).waitFor();
      // Select another event in the waterfall, then go back to the finder.
      await page.locator(".wf-row").getByRole("link", { name: "task-42-llm" })
        .click();
      await page.waitForURL(/selected=task-42-llm/);
      await page.getByRole("link", { name: "Back to the finder" }).first()
        .click();
      await page.waitForURL(/\/traces\/find\?/);
      const back = new URL(page.url());
      assert.equal(back.searchParams.get("q"), INCIDENT.thread_id);
      assert.equal(back.searchParams.get("selected"), "task-42-llm");
      const highlighted = page.locator(".event-line.is-selected");
      assert.equal(await highlighted.count(), 1);
      assert.match(await highlighted.innerText(), /task-42-llm/);
      assert.equal(
        await page.locator('input[type="hidden"][name="selected"]')
          .inputValue(),
        "task-42-llm",
      );
      await screenshot(page, "traces-find-roundtrip-desktop");
    });
  },
);

browserTest(
  "inspection shows the lineage lanes and the selection with every candidate, and filters by lane and kind",
  async (kit) => {
    await withUiServer({ seed: seedAll }, async (server) => {
      const page = await signedIn(await kit.open(), server.loginUrl);
      const base =
        `${server.origin}/traces/inspect?application_id=${INCIDENT.application_id}&root_trace_id=${INCIDENT.root_trace_id}&agent_id=${INCIDENT.agent_id}&selected=${INCIDENT.selection_event}`;
      await page.goto(base);
      await page.getByRole("heading", { name: "Memory lineage" }).waitFor();
      const lane = (name: string) =>
        page.locator(`section.lane:has(h3#lane-${name})`);
      assert.match(await lane("expected").innerText(), /doc-policy/);
      assert.match(await lane("output_bound").innerText(), /doc-deleted-7/);
      assert.match(await lane("supplied").innerText(), /doc-deleted-7/);
      const candidates = page.locator("#candidates tbody tr");
      assert.equal(await candidates.count(), 64);
      assert.match(await candidates.nth(0).innerText(), /KEPT[\s\S]*mmr_rank/);
      assert.match(
        await candidates.nth(3).innerText(),
        /DROPPED[\s\S]*stale_version/,
      );
      await screenshot(page, "traces-inspect-incident-desktop");
      await page.setViewportSize(VIEWPORTS.mobile);
      await page.reload();
      await checkLayout(page, "traces-inspect-incident-mobile");
      await page.setViewportSize(VIEWPORTS.desktop);
      // Lane filter: only the supplied lane, only the events that supplied.
      await page.getByRole("link", { name: /^Supplied/ }).click();
      await page.waitForURL(/lane=supplied/);
      assert.equal(await page.locator("section.lane").count(), 1);
      assert.deepEqual(
        await page.locator(".wf-row a").allInnerTexts(),
        [INCIDENT.selection_event, "task-42-llm"],
      );
      // Kind filter: one kind, the selection kept in the URL.
      await page.getByRole("link", { name: /^delivery/ }).click();
      await page.waitForURL(/kind=delivery/);
      assert.match(page.url(), /selected=task-42-select/);
      assert.match(page.url(), /lane=supplied/);
      await page.getByText("No event matches the view filters").waitFor();
      await page.getByRole("link", { name: /^All lanes/ }).click();
      await page.waitForURL((url) => !url.searchParams.has("lane"));
      assert.deepEqual(await page.locator(".wf-row a").allInnerTexts(), [
        "task-42-deliver",
      ]);
      // A folded subtree hides its children without JavaScript help.
      await page.getByRole("link", { name: /^All kinds/ }).click();
      await page.waitForURL((url) => !url.searchParams.has("kind"));
      await page.locator("summary.wf-row").first().click();
      assert.equal(await page.locator(".wf-row:visible").count(), 1);
      await screenshot(page, "traces-inspect-folded-desktop");
    });
  },
);

browserTest(
  "a legacy trace says coverage is unknown and explains each empty panel",
  async (kit) => {
    await withUiServer({ seed: seedAll }, async (server) => {
      // The login URL works once: one signed-in page, resized.
      const page = await signedIn(await kit.open(), server.loginUrl);
      for (const [name, viewport] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(viewport);
        await page.goto(
          `${server.origin}/traces/inspect?application_id=${LEGACY.application_id}&root_trace_id=${LEGACY.root_trace_id}&agent_id=${LEGACY.agent_id}`,
        );
        assert.equal(
          await page.locator(".verdict__reason").innerText(),
          "All stored events loaded; end-to-end coverage unknown.",
        );
        assert.equal(
          await page.getByText(/The host did not record it/).count(),
          6,
        );
        await page.getByText(/Missing fields: coverage_profile/).waitFor();
        await page.getByText("No selection recorded").waitFor();
        await checkLayout(page, `traces-inspect-legacy-${name}`);
      }
    });
  },
);

browserTest(
  "with 40 busy threads the overview stays closed below a selected incident, which leads the page on desktop and phone",
  async (kit) => {
    await withUiServer({ seed: seedAll }, async (server) => {
      const limits = { desktop: 1_200, mobile: 1_400 } as const;
      const page = await signedIn(await kit.open(), server.loginUrl);
      for (const [name, viewport] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(viewport);
        await page.goto(
          `${server.origin}/traces/find?application_id=${INCIDENT.application_id}&selected=${INCIDENT.selection_event}`,
        );
        const overview = page.locator("details#overview");
        assert.equal(await overview.getAttribute("open"), null);
        const top = await topOf(page, "#selected");
        assert.ok(
          top < limits[name as keyof typeof limits],
          `selected incident at ${top} px on ${name}`,
        );
        assert.ok(
          await topOf(page, ".group--selected") <
            await topOf(page, "details#overview"),
        );
        await checkLayout(page, `traces-find-selected-${name}`);
        // Opened, the overview lists every thread inside its own scroll box.
        await overview.locator("summary").click();
        const rows = page.locator("#overview-table tbody tr");
        assert.equal(await rows.count(), 41);
        await page.getByLabel("Filter rows").fill("thread-07");
        assert.equal(
          await page.locator("#overview-table tbody tr:visible").count(),
          1,
        );
        assert.equal(await scrollsHorizontally(page), false, name);
      }
      // Without a selection the overview opens on the landing page.
      await page.setViewportSize(VIEWPORTS.desktop);
      await page.goto(`${server.origin}/traces/find`);
      assert.notEqual(
        await page.locator("details#overview").getAttribute("open"),
        null,
      );
      await screenshot(page, "traces-find-landing-desktop");
    });
  },
);

browserTest(
  "from a FAIL run, one link shows the thread's evidence and a second the cache entry that served the stale answer",
  async (kit) => {
    await withUiServer({}, async (server) => {
      const { report } = await runStaleCache(
        server.db,
        server.dataDir,
        server.origin,
      );
      assert.equal(report.verdict, "FAIL");
      assert.ok(
        report.findings.some((f) => f.severity === "fail"),
        "the marker was still retrievable",
      );
      const page = await signedIn(await kit.open(), server.loginUrl);
      // Click one: the run page's evidence link.
      await page.goto(
        server.origin + runEvidenceHref(report.run_id, report.namespaces.test),
      );
      const selected = page.locator("#selected");
      assert.match(await selected.innerText(), /"FAIL"/);
      const callout = page.locator("#served-after-deletion");
      assert.match(await callout.innerText(), /served after deletion/);
      assert.match(await callout.innerText(), /served by cache_entry:/);
      // The runner's requests and the demo's answers are both listed.
      await page.locator(".group__title").getByText(report.run_id).waitFor();
      assert.ok(
        await page.locator(".group__title", { hasText: "selection" }).count() >
          0,
      );
      await screenshot(page, "traces-run-evidence-desktop");
      const cacheEntry = (await callout.locator("code.ref").nth(1).innerText())
        .replace("cache_entry:", "");
      // Click two: the answer the cache entry served.
      await callout.getByRole("link", { name: "Inspect that answer" }).first()
        .click();
      await page.waitForURL(/\/traces\/inspect\?/);
      const row = page.locator("#candidates tbody tr").first();
      assert.match(
        await row.innerText(),
        new RegExp(`cache_entry:${cacheEntry}`),
      );
      assert.match(await row.innerText(), /KEPT[\s\S]*application_policy/);
      assert.match(
        await page.locator("section.lane:has(h3#lane-supplied)").innerText(),
        new RegExp(cacheEntry),
      );
      assert.match(
        await page.locator("#deletion-evidence").innerText(),
        /was deleted by/,
      );
      // That answer is the event this page shows: no link back to itself.
      const selfLinks = await page.locator("#deletion-evidence a")
        .evaluateAll((links) =>
          links.filter((link) => {
            const to = new URL((link as HTMLAnchorElement).href);
            const here = new URL(location.href);
            return to.pathname === here.pathname &&
              ["root_trace_id", "selected"].every((key) =>
                to.searchParams.get(key) === here.searchParams.get(key)
              );
          }).length
        );
      assert.equal(selfLinks, 0);
      assert.match(
        await page.locator("#deletion-evidence").innerText(),
        /That answer is the selected event above/,
      );
      await screenshot(page, "traces-stale-cache-entry-desktop");
      // The run's own root on a phone: its id and the run link wrap.
      await page.setViewportSize(VIEWPORTS.mobile);
      await page.goto(
        `${server.origin}/traces/inspect?application_id=trace&root_trace_id=${report.run_id}&agent_id=trace-runner`,
      );
      await page.getByRole("link", { name: `Open run ${report.run_id}` })
        .waitFor();
      await checkLayout(page, "traces-run-root-mobile");
    });
  },
);

browserTest(
  "256-character ids wrap in headings, facts and links instead of widening the page",
  async (kit) => {
    const long = (c: string) => c.repeat(256);
    await withUiServer({
      seed: (db) =>
        ingestEvents(db, [{
          application_id: "long-app",
          agent_id: long("A"),
          thread_id: long("T"),
          user_id: long("U"),
          event_id: long("E"),
          root_trace_id: long("R"),
          kind: "memory_search",
          tool: long("t"),
          started_at: "2026-11-30T11:00:00Z",
          attributes: {
            "gen_ai.request.model": long("M"),
            "app.long": long("V"),
          },
        }]),
    }, async (server) => {
      const page = await signedIn(await kit.open(), server.loginUrl);
      const paths = [
        `/traces/inspect?application_id=long-app&root_trace_id=${
          long("R")
        }&agent_id=${long("A")}&selected=${long("E")}`,
        `/traces/events/${long("E")}?application_id=long-app`,
        `/traces/find?q=${long("E")}`,
      ];
      for (const [name, viewport] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(viewport);
        for (const [i, path] of paths.entries()) {
          await page.goto(server.origin + path);
          await checkLayout(page, `traces-long-ids-${i}-${name}`);
        }
      }
    });
  },
);

browserTest(
  "a refused filter keeps the finder and what was typed; a time without a zone is read as UTC",
  async (kit) => {
    await withUiServer({ seed: seedAll }, async (server) => {
      const opened = await kit.open();
      // The refused search's own answer is a 400 the console reports.
      opened.allowed.push("status of 400");
      const page = await signedIn(opened, server.loginUrl);
      for (const [name, viewport] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(viewport);
        await page.goto(`${server.origin}/traces/find`);
        await page.locator("summary", { hasText: "Filters" }).click();
        await page.getByLabel("Thread", { exact: true }).fill(
          INCIDENT.thread_id,
        );
        const from = page.getByLabel("From (inclusive)");
        await from.fill("29/11/2026 10:00");
        const answer = page.waitForResponse((r) =>
          r.url().includes("/traces/find?")
        );
        await page.getByRole("button", { name: "Find" }).click();
        assert.equal((await answer).status(), 400);
        const alert = page.getByRole("alert");
        await alert.waitFor();
        assert.match(
          await alert.innerText(),
          /Nothing was searched: check From \(inclusive\), then search again\./,
        );
        assert.equal(await from.inputValue(), "29/11/2026 10:00");
        assert.equal(await from.getAttribute("aria-invalid"), "true");
        assert.equal(
          await page.getByLabel("Thread", { exact: true }).inputValue(),
          INCIDENT.thread_id,
        );
        assert.equal(
          await page.getByRole("navigation", { name: "Main" }).count(),
          1,
        );
        await checkLayout(page, `traces-find-refused-${name}`);
        // The notice leads to the field.
        await alert.getByRole("link", { name: "From (inclusive)" }).click();
        assert.equal(new URL(page.url()).hash, "#f-start_time");
        // Corrected the way people type it, the search runs.
        await from.fill("2026-11-29 10:00");
        await page.getByRole("button", { name: "Find" }).click();
        await page.waitForURL(/start_time=2026-11-29T10%3A00%3A00Z/);
        assert.equal(await from.inputValue(), "2026-11-29T10:00:00Z");
        assert.equal(await page.getByRole("alert").count(), 0);
        assert.equal(
          await page.getByLabel("Thread", { exact: true }).inputValue(),
          INCIDENT.thread_id,
        );
      }
    });
  },
);

/// <reference lib="dom" />
/** The trace UI in a real browser: sign-in, refusals, the health page's layout, keyboard focus. */

import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { TraceDb } from "../../lib/db.ts";
import { ingestEvents } from "../../lib/obs/ingest/mod.ts";
import {
  browserTest,
  checkLayout,
  screenshot,
  scrollsHorizontally,
  VIEWPORTS,
} from "./_harness.ts";
import { submitFromAnotherSite } from "./_page.ts";
import { ADMIN_TOKEN, loginUrlTo, withUiServer } from "./_server.ts";

/** A small index with something to report: a missing parent, a truncated preview, two versions. */
async function seedDegraded(db: TraceDb): Promise<void> {
  const events = Array.from({ length: 40 }, (_, i) => ({
    application_id: i % 2 ? "support-app" : "billing-app",
    agent_id: "support-bot",
    event_id: `evt-${i}`,
    root_trace_id: `root-${Math.floor(i / 10)}`,
    parent_event_id: i % 10 === 0 ? null : `evt-${i - 1}`,
    kind: ["retrieval", "selection", "llm_call", "tool_call"][i % 4],
    started_at: new Date(Date.UTC(2026, 10, 29, 10, 0, i)).toISOString(),
    attributes: {
      "instrumentation.name": i < 30 ? "trace-recorder" : "otel-genai",
      "instrumentation.version": i < 30 ? "1.4.0" : "0.9.2",
    },
  }));
  events.push({
    ...events[0]!,
    event_id: "evt-orphan",
    parent_event_id: "evt-never-sent",
  });
  await ingestEvents(db, events);
  await ingestEvents(db, [{
    ...events[1]!,
    event_id: "evt-long-preview",
    preview: "x".repeat(20_000),
  }]);
}

browserTest(
  "the one-time login URL opens one session and is refused on reuse",
  async (kit) => {
    await withUiServer({}, async (server) => {
      const first = await kit.open();
      await first.page.goto(server.loginUrl);
      assert.equal(new URL(first.page.url()).pathname, "/");
      assert.ok(!first.page.url().includes("token"), "the token left the URL");
      assert.equal(await first.page.locator("h1").textContent(), "Overview");
      const [cookie] = await first.context.cookies();
      assert.ok(cookie);
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, "Strict");

      const second = await kit.open();
      const response = await second.page.goto(server.loginUrl);
      assert.equal(response?.status(), 410);
      await second.page.getByText("already been used").waitFor();
      assert.equal(await second.context.cookies().then((c) => c.length), 0);
      await screenshot(second.page, "login-used-desktop");
      second.allowed.push("status of 410");
    });
  },
);

browserTest(
  "a page without a session redirects to the login page, which explains the way in",
  async (kit) => {
    await withUiServer({}, async (server) => {
      const visitor = await kit.open({ viewport: VIEWPORTS.mobile });
      await visitor.page.goto(`${server.origin}/traces/find?kind=selection`);
      const url = new URL(visitor.page.url());
      assert.equal(url.pathname, "/login");
      assert.equal(url.searchParams.get("next"), "/traces/find?kind=selection");
      await visitor.page.getByRole("heading", { name: "Sign in to Trace" })
        .waitFor();
      await visitor.page.getByText("printed on its standard error").waitFor();
      await checkLayout(visitor.page, "login-mobile");
      // After signing in, the login URL returns to where the visitor was going.
      await visitor.page.goto(
        loginUrlTo(server.loginUrl, "/traces/find?kind=selection"),
      );
      assert.equal(
        new URL(visitor.page.url()).pathname +
          new URL(visitor.page.url()).search,
        "/traces/find?kind=selection",
      );
    });
  },
);

browserTest(
  "TRACE_UI_AUTH_TOKEN works as a bearer token and as a login that can be reused",
  async (kit) => {
    await withUiServer({ adminToken: ADMIN_TOKEN }, async (server) => {
      const json = await fetch(`${server.origin}/traces/health.json`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(json.status, 200);
      assert.equal((await json.json()).schema.provisioned, true);
      const page = await fetch(`${server.origin}/traces/health`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<h1>Index health<\/h1>/);
      const wrong = await fetch(`${server.origin}/traces/health.json`, {
        headers: { authorization: "Bearer not-the-admin-token-at-all" },
      });
      assert.equal(wrong.status, 401);
      await wrong.body?.cancel();

      for (const round of [1, 2]) {
        const visitor = await kit.open();
        await visitor.page.goto(`${server.origin}/login`);
        await visitor.page.getByLabel("TRACE_UI_AUTH_TOKEN").fill(ADMIN_TOKEN);
        await visitor.page.getByRole("button", { name: "Sign in" }).click();
        await visitor.page.waitForURL(`${server.origin}/`);
        assert.equal(
          await visitor.page.locator(".session strong").textContent(),
          "token",
          `round ${round}`,
        );
      }
    });
  },
);

browserTest(
  "a cross-site POST is refused and leaves the session alone",
  async (kit) => {
    await withUiServer({}, async (server) => {
      const victim = await kit.open();
      await victim.page.goto(server.loginUrl);
      // Another site (localhost is a different site from 127.0.0.1) with a form
      // that posts to the UI's sign-out route.
      const status = await submitFromAnotherSite(
        victim.page,
        `${server.origin}/logout`,
        "localhost",
      );
      assert.equal(status, 403);
      victim.allowed.push("status of 403");
      const back = await victim.page.goto(`${server.origin}/traces/health`);
      assert.equal(back?.status(), 200);
      assert.equal(new URL(victim.page.url()).pathname, "/traces/health");
    });
  },
);

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  browserTest(
    `the health page at ${name} size leads with the status and never scrolls sideways`,
    async (kit) => {
      await withUiServer({ seed: seedDegraded }, async (server) => {
        const visitor = await kit.open({ viewport });
        await visitor.page.goto(loginUrlTo(server.loginUrl, "/traces/health"));
        // A second check draws the latency history.
        await visitor.page.reload();
        const badge = visitor.page.locator(".page-head .badge");
        assert.equal(await badge.textContent(), "DEGRADED");
        const box = await badge.boundingBox();
        assert.ok(
          box && box.y + box.height <= viewport.height,
          "status below the fold",
        );
        const reason = await visitor.page.locator(".verdict__reason")
          .boundingBox();
        assert.ok(reason && reason.y + reason.height <= viewport.height);
        assert.equal(await scrollsHorizontally(visitor.page), false);
        await visitor.page.getByRole("heading", { name: "Query latency" })
          .waitFor();
        assert.equal(
          await visitor.page.locator("#latency-probes svg[role=img]").count(),
          1,
        );
        for (const chart of ["latency-probes", "latency-history"]) {
          assert.deepEqual(await chartFit(visitor.page, chart), {
            insidePanel: true,
            scrolls: false,
            cutText: [],
          }, chart);
        }
        await screenshot(visitor.page, `health-${name}`);
        const dark = await kit.openWithSession(visitor, {
          viewport,
          colorScheme: "dark",
        });
        await dark.page.goto(`${server.origin}/traces/health`);
        await screenshot(dark.page, `health-${name}-dark`);
      });
    },
  );
}

browserTest("the empty index explains itself", async (kit) => {
  await withUiServer({}, async (server) => {
    const visitor = await kit.open();
    await visitor.page.goto(loginUrlTo(server.loginUrl, "/traces/health"));
    await visitor.page.getByText("No events indexed yet").waitFor();
    await visitor.page.getByText("trace events ingest events.ndjson")
      .waitFor();
    await screenshot(visitor.page, "health-empty-desktop");
  });
});

browserTest(
  "keyboard focus is visible, the skip link reaches the content, copy buttons copy",
  async (kit) => {
    await withUiServer({}, async (server) => {
      const visitor = await kit.open();
      await visitor.context.grantPermissions([
        "clipboard-read",
        "clipboard-write",
      ]);
      await visitor.page.goto(loginUrlTo(server.loginUrl, "/traces/health"));
      await visitor.page.keyboard.press("Tab");
      const focused = await visitor.page.evaluate(() => {
        const element = document.activeElement as HTMLElement;
        const style = getComputedStyle(element);
        const box = element.getBoundingClientRect();
        return {
          text: element.textContent,
          outline: style.outlineStyle,
          width: parseFloat(style.outlineWidth),
          visible: box.top >= 0 && box.height > 0,
        };
      });
      assert.equal(focused.text, "Skip to content");
      assert.notEqual(focused.outline, "none");
      assert.ok(focused.width >= 2, `outline ${focused.width}px`);
      assert.ok(focused.visible, "the focused skip link is off screen");
      await screenshot(visitor.page, "focus-skip-link");
      await visitor.page.keyboard.press("Enter");
      assert.equal(
        await visitor.page.evaluate(() => document.activeElement?.id),
        "main",
      );
      // Every link and button after it can be reached and shows its focus.
      const stops: string[] = [];
      for (let i = 0; i < 30; i++) {
        await visitor.page.keyboard.press("Tab");
        const stop = await visitor.page.evaluate(() => {
          const element = document.activeElement;
          if (!element || element === document.body) return null;
          return {
            text: element.textContent?.trim() ?? "",
            outline: getComputedStyle(element).outlineStyle,
          };
        });
        if (!stop) break;
        assert.notEqual(
          stop.outline,
          "none",
          `focus not shown on ${stop.text}`,
        );
        stops.push(stop.text);
      }
      assert.equal(stops[0], "Check again");
      assert.ok(stops.includes("Raw JSON"), stops.join(" | "));
      assert.ok(stops.includes("Copy"), stops.join(" | "));
      const copy = visitor.page.getByRole("button", {
        name: /Copy data location/,
      });
      await copy.click();
      await copy.filter({ hasText: "Copied" }).waitFor();
      assert.equal(
        await visitor.page.evaluate(() => navigator.clipboard.readText()),
        `${server.dataDir}/trace.db`,
      );
    });
  },
);

/**
 * Whether a chart's plot lies inside its panel, whether its plot scrolls
 * sideways and which of its texts reach past the plot's edges (cut off): a
 * chart that scales to its column does none of these wrong.
 */
async function chartFit(
  page: Page,
  id: string,
): Promise<{ insidePanel: boolean; scrolls: boolean; cutText: string[] }> {
  return await page.evaluate((id) => {
    const figure = document.getElementById(id)!;
    const plot = figure.querySelector<HTMLElement>(".chart__plot")!;
    const svg = plot.querySelector("svg")!.getBoundingClientRect();
    const panel = figure.closest(".panel")!.getBoundingClientRect();
    const box = plot.getBoundingClientRect();
    return {
      insidePanel: svg.left >= panel.left && svg.right <= panel.right,
      scrolls: plot.scrollWidth > plot.clientWidth,
      cutText: [...plot.querySelectorAll("text")].filter((text) => {
        const r = text.getBoundingClientRect();
        return r.left < box.left - 0.5 || r.right > box.right + 0.5;
      }).map((text) => text.textContent ?? ""),
    };
  }, id);
}

/// <reference lib="dom" />
/**
 * An operator's path through the trace pages as a whole, in a real browser:
 * the operator controls where the evidence is (reveal, replay draft and
 * artifact lookups in inspection; account resolution above the finder's
 * search), the producer fields the finder and inspection show for AI SDK
 * spans, the way from a deletion run to its evidence and back, from health
 * to the finder, and a tenant-bound analyst's path with no link it may not
 * open.
 */

import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { listAudit } from "../../lib/auth/mod.ts";
import { ingestEvents } from "../../lib/obs/ingest/mod.ts";
import { recorderForWorker } from "../../lib/obs/ingest/mod.ts";
import { AI_SDK_TURN, runAiSdkTurn } from "./_ai_sdk.ts";
import {
  browserTest,
  checkLayout,
  type OpenPage,
  screenshot,
  VIEWPORTS,
} from "./_harness.ts";
import {
  assertForgedRevealRefused,
  signIn,
  withHostServer,
} from "./_host_server.ts";
import { EXAMPLE_ACCOUNTS } from "../../fixtures/host/host.ts";
import { ANSWER_PREVIEW } from "../operator_support.ts";
import { loginUrlTo, withUiServer } from "./_server.ts";
import { runStaleCache } from "./_trace_fixtures.ts";

/** Inspection of the example host's root with two turns. */
const ROOT_1 =
  "/traces/inspect?application_id=app-1&root_trace_id=root-1&agent_id=support-bot";

/** The waterfall row of `eventId` (its id link names it exactly). */
function waterfallRow(page: Page, eventId: string): Locator {
  return page.locator(".wf-row").filter({
    has: page.getByRole("link", { name: eventId, exact: true }),
  });
}

browserTest(
  "an admin reveals a preview from the inspection with a reason; the reveal is audited and leads back",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const admin = await kit.open();
      const page = admin.page;
      await signIn(page, host.origin, "admin-1", ROOT_1);
      assert.ok(
        !(await page.content()).includes(ANSWER_PREVIEW),
        "hidden at first",
      );
      // The row of an event with a stored preview leads to its reveal control.
      assert.equal(
        await waterfallRow(page, "evt-search").getByRole("link", {
          name: "content preview",
        }).count(),
        0,
        "no preview, no reveal link",
      );
      await waterfallRow(page, "evt-answer").getByRole("link", {
        name: "content preview",
      }).click();
      await page.waitForURL(/selected=evt-answer#reveal$/);
      const form = page.locator('#reveal form[data-control="reveal"]');
      assert.equal(
        await form.getByLabel("Turn (optional)").inputValue(),
        "turn-1",
      );
      await form.getByLabel("Reason (required, recorded)").fill(
        "SUP-77 refund dispute",
      );
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith("/traces/reveal")),
        form.getByRole("button", { name: "Reveal content" }).click(),
      ]);
      assert.equal(response.status(), 200);
      assert.equal(await response.headerValue("cache-control"), "no-store");
      const sent = new URLSearchParams(response.request().postData() ?? "");
      assert.equal(sent.get("application_id"), "app-1");
      assert.equal(sent.get("event_id"), "evt-answer");
      assert.equal(
        await page.locator("[data-revealed]").textContent(),
        ANSWER_PREVIEW,
      );
      await screenshot(page, "paths-inspect-revealed");
      const [entry] = await listAudit(host.db, { action: "content.reveal" });
      assert.equal(entry?.operator, "admin-1");
      assert.equal(entry?.outcome, "succeeded");
      assert.equal(entry?.payload.reason, "SUP-77 refund dispute");
      await page.getByText(`audit trail as entry ${entry!.seq}`).waitFor();
      // No dead end: the event's page, then its root's inspection again.
      await page.getByRole("link", { name: "Back to the event" }).click();
      await page.getByRole("link", { name: "Inspect its root" }).first()
        .click();
      await page.waitForURL(/\/traces\/inspect\?.*selected=evt-answer/);
      await page.locator("#selected").getByText("evt-answer").first()
        .waitFor();
      assert.ok(!(await page.content()).includes(ANSWER_PREVIEW));
    });
  },
);

browserTest(
  "a viewer sees inspection's controls disabled with the reason, and a forged reveal is refused with 403",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const viewer = await kit.open();
      const page = viewer.page;
      await signIn(
        page,
        host.origin,
        "viewer-1",
        `${ROOT_1}&selected=evt-answer`,
      );
      const reveal = page.locator('#reveal form[data-control="reveal"]');
      assert.equal(
        await reveal.getByRole("button", { name: "Reveal content" })
          .isDisabled(),
        true,
      );
      assert.equal(
        await reveal.getByLabel("Reason (required, recorded)").isDisabled(),
        true,
      );
      await reveal.getByText(
        "revealing content needs the admin role or above; this account is viewer",
      ).waitFor();
      const replay = page.locator('#replay form[data-control="replay-draft"]');
      assert.equal(await replay.getByRole("button").isDisabled(), true);
      await replay.getByText("needs the analyst role or above").waitFor();
      // Every artifact lookup of the lineage says it is off, and the panel says why.
      const lookups = page.locator('#lineage [data-control="artifact"]');
      assert.ok(await lookups.count() > 0);
      assert.deepEqual(
        [
          ...new Set(
            await lookups.evaluateAll((nodes) =>
              nodes.map((n) => n.getAttribute("data-disabled-reason"))
            ),
          ),
        ],
        ["role"],
      );
      await page.locator("#lineage").getByText(
        "The current state of these refs is not looked up here",
      ).waitFor();
      await screenshot(page, "paths-inspect-viewer-disabled");
      await assertForgedRevealRefused(viewer, host, "SUP-1 just looking");
    });
  },
);

browserTest(
  "a replay draft of one turn is created from the inspection and leaves the other turn's refs out",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const analyst = await kit.open();
      const page = analyst.page;
      await signIn(page, host.origin, "analyst-1", ROOT_1);
      const section = page.locator("#replay");
      // The whole root is offered, and each turn narrows the read to itself.
      await section.getByRole("button", {
        name: "Create replay draft of the whole root",
      }).waitFor();
      await section.getByRole("link", { name: "turn turn-1" }).click();
      await page.waitForURL(/turn_id=turn-1/);
      const form = page.locator('#replay form[data-control="replay-draft"]');
      await form.getByLabel("Note for reviewers (optional)").fill(
        "SUP-77 replay",
      );
      const [request] = await Promise.all([
        page.waitForRequest((r) => r.url().endsWith("/traces/replays")),
        form.getByRole("button", { name: "Create replay draft of turn turn-1" })
          .click(),
      ]);
      const sent = new URLSearchParams(request.postData() ?? "");
      assert.equal(sent.get("agent_id"), "support-bot");
      assert.equal(sent.get("root_trace_id"), "root-1");
      assert.equal(sent.get("turn_id"), "turn-1");
      assert.equal(sent.get("application_id"), "app-1");
      await page.getByRole("heading", { name: "Replay draft created" })
        .waitFor();
      assert.deepEqual(
        await page.locator("#draft-refs tbody th").allTextContents(),
        ["doc-1", "doc-2"],
      );
      assert.ok(!(await page.content()).includes("doc-9"), "turn-2 left out");
      await screenshot(page, "paths-inspect-replay-draft");
      const [entry] = await listAudit(host.db, { action: "replay.draft" });
      assert.equal(entry?.operator, "analyst-1");
      assert.equal(entry?.outcome, "succeeded");
      await page.getByRole("link", { name: "Back to the inspection" }).click();
      await page.waitForURL(/\/traces\/inspect\?.*root_trace_id=root-1/);
    });
  },
);

browserTest(
  "an operator resolves an email from the finder to the customer's traces; the control says why it is off for a viewer or without the hook",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const ops = await kit.open();
      const page = ops.page;
      await signIn(page, host.origin, "ops-1", "/traces/find");
      const form = page.locator('form[data-control="account-resolve"]');
      // Above the search: the account form comes first.
      const [formTop, searchTop] = await Promise.all([
        form.evaluate((el) => el.getBoundingClientRect().top),
        page.locator('form[role="search"]').evaluate((el) =>
          el.getBoundingClientRect().top
        ),
      ]);
      assert.ok(formTop < searchTop, "account resolution above the search");
      await form.getByLabel("Customer email").fill("ada@example.com");
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().includes("/traces/account/")),
        form.getByRole("button", { name: "Look up user id" }).click(),
      ]);
      assert.equal(response.status(), 200);
      assert.equal(
        new URL(response.url()).search,
        "",
        "the email never goes into a URL",
      );
      await page.getByRole("heading", { name: "Account resolved" }).waitFor();
      await screenshot(page, "paths-account-resolved");
      const [entry] = await listAudit(host.db, { action: "account.resolve" });
      assert.equal(entry?.operator, "ops-1");
      assert.ok(!JSON.stringify(entry).includes("ada@example.com"));
      await page.getByRole("link", { name: "Find this user's trace events" })
        .click();
      await page.waitForURL(/\/traces\/find\?user_id=user-ada/);
      const titles = await page.locator(".group__title").allTextContents();
      assert.ok(titles.some((t) => t.includes("root-1")), titles.join("; "));
      assert.ok(
        !titles.some((t) => t.includes("root-anon")),
        "only that user's tasks",
      );
      assert.ok(
        !(await page.locator(".group").allInnerTexts()).some((t) =>
          t.includes("app-2")
        ),
        "not the other application's",
      );
      const viewer = await kit.open();
      await signIn(viewer.page, host.origin, "viewer-1", "/traces/find");
      const off = viewer.page.locator('form[data-control="account-resolve"]');
      assert.equal(await off.getByRole("button").isDisabled(), true);
      await off.getByText("resolving accounts needs the operator role or above")
        .waitFor();
    });
    await withHostServer({ withoutHooks: true }, async (host) => {
      const ops = await kit.open();
      await signIn(ops.page, host.origin, "ops-1", "/traces/find");
      const form = ops.page.locator('form[data-control="account-resolve"]');
      assert.equal(await form.getByRole("button").isDisabled(), true);
      await form.getByText("This server has no identityResolver").waitFor();
      assert.equal(
        await form.locator("[data-disabled-reason]").getAttribute(
          "data-disabled-reason",
        ),
        "hook_missing",
      );
      await screenshot(ops.page, "paths-finder-no-identity-resolver");
    });
  },
);

browserTest(
  "an artifact lookup from the lineage answers in place, and is audited",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const analyst = await kit.open();
      const page = analyst.page;
      await signIn(page, host.origin, "analyst-1", ROOT_1);
      const supplied = page.locator("section.lane:has(h3#lane-supplied)");
      const item = supplied.locator("li", { hasText: "doc-1" });
      await item.getByRole("link", { name: "current state" }).click();
      await item.locator("[data-lookup-result]").getByText(
        "exists now, version v3",
      ).waitFor();
      assert.equal(new URL(page.url()).pathname, "/traces/inspect");
      const [entry] = await listAudit(host.db, { action: "artifact.lookup" });
      assert.equal(entry?.operator, "analyst-1");
      assert.equal(entry?.outcome, "succeeded");
    });
  },
);

browserTest(
  "the finder and inspection show the tool, model, tokens, user and thread of AI SDK spans",
  async (kit) => {
    await withUiServer({}, async (server) => {
      await runAiSdkTurn(server.origin);
      const opened = await kit.open();
      const page = opened.page;
      await page.goto(server.loginUrl);
      await page.goto(
        `${server.origin}/traces/find?q=${AI_SDK_TURN.thread_id}`,
      );
      const step = page.locator(".group", { hasText: "agent_step" });
      const facts = await step.locator(".group__facts").innerText();
      assert.match(facts, new RegExp(`user ${AI_SDK_TURN.user_id}`));
      assert.match(facts, new RegExp(`thread ${AI_SDK_TURN.thread_id}`));
      const line = (kind: string) =>
        step.locator(".event-line", {
          has: page.locator(`code.kind`, { hasText: new RegExp(`^${kind}$`) }),
        });
      const call = await line("llm_call").first().innerText();
      assert.match(call, new RegExp(`model\\s+${AI_SDK_TURN.chat_model}`));
      assert.match(call, /tokens\s+11 in \/ 7 out/);
      assert.match(
        await line("tool_call").innerText(),
        new RegExp(`tool\\s+${AI_SDK_TURN.tool}`),
      );
      const embedding = page.locator(".group", { hasText: "embedding" });
      assert.match(
        await embedding.locator(".event-line").first().innerText(),
        new RegExp(
          `model\\s+${AI_SDK_TURN.embed_model}[\\s\\S]*tokens\\s+9 in`,
        ),
      );
      await screenshot(page, "paths-finder-ai-sdk-desktop");
      // The twin carries the same fields.
      const twin = await page.evaluate(
        async (thread) =>
          await (await fetch(`/traces/find.json?q=${thread}`)).json(),
        AI_SDK_TURN.thread_id,
      );
      const rows = twin.event_fields as {
        kind: string;
        model: string | null;
        input_tokens: number | null;
        user_id: string | null;
      }[];
      const calls = rows.filter((r) => r.kind === "llm_call");
      assert.equal(calls.length, 2);
      assert.ok(
        calls.every((r) =>
          r.model === AI_SDK_TURN.chat_model && r.input_tokens === 11 &&
          r.user_id === AI_SDK_TURN.user_id
        ),
      );
      // Inspection names the shared user and thread once, and each row's model and tokens.
      await step.locator(".group__title").click();
      await page.waitForURL(/\/traces\/inspect\?/);
      assert.match(
        await page.locator(".page-head").innerText(),
        new RegExp(
          `user ${AI_SDK_TURN.user_id}, thread ${AI_SDK_TURN.thread_id}`,
        ),
      );
      const rowsText = await page.locator(".wf-row").allInnerTexts();
      assert.ok(
        rowsText.some((t) =>
          /llm_call[\s\S]*model\s+mock-chat-1[\s\S]*tokens\s+11 in \/ 7 out/
            .test(t)
        ),
        rowsText.join("\n"),
      );
      assert.ok(rowsText.some((t) => /tool_call[\s\S]*tool\s+weather/.test(t)));
      await screenshot(page, "paths-inspect-ai-sdk-desktop");
      await page.setViewportSize(VIEWPORTS.mobile);
      await page.goto(
        `${server.origin}/traces/find?q=${AI_SDK_TURN.thread_id}`,
      );
      await checkLayout(page, "paths-finder-ai-sdk-mobile");
    });
  },
);

browserTest(
  "from a run's page to its evidence in the finder, and from the run's root back to its page",
  async (kit) => {
    await withUiServer({}, async (server) => {
      const { report } = await runStaleCache(
        server.db,
        server.dataDir,
        server.origin,
      );
      const opened = await kit.open();
      const page = opened.page;
      await page.goto(server.loginUrl);
      await page.goto(`${server.origin}/runs/${report.run_id}`);
      await page.getByRole("link", { name: "This run's trace events" }).click();
      await page.waitForURL(/\/traces\/find\?/);
      const back = `Open run ${report.run_id}`;
      // The selected run event and the run root's card both lead back.
      await page.locator("#selected").getByRole("link", { name: back }).click();
      await page.waitForURL(`${server.origin}/runs/${report.run_id}`);
      await page.goBack();
      const card = page.locator(".group", {
        has: page.locator(".group__title", { hasText: report.run_id }),
      });
      assert.equal(await card.getByRole("link", { name: back }).count(), 1);
      // A card of the demo app's own root is no run: it has no such link.
      const demo = page.locator(".group", { hasText: "selection" }).first();
      assert.equal(
        await demo.getByRole("link", { name: /^Open run/ }).count(),
        0,
      );
      await screenshot(page, "paths-run-evidence");
      await card.locator(".group__title").click();
      await page.waitForURL(/\/traces\/inspect\?/);
      await page.locator(".page-head").getByRole("link", { name: back })
        .click();
      await page.waitForURL(`${server.origin}/runs/${report.run_id}`);
    });
  },
);

browserTest(
  "the health page leads to the finder for the events a count or counter names",
  async (kit) => {
    await withUiServer({
      seed: async (db) => {
        await ingestEvents(db, [{
          application_id: "chat-app",
          agent_id: "chat-bot",
          root_trace_id: "conv-1",
          event_id: "conv-1-msg",
          kind: "llm_call",
          store: "conversation",
        }]);
      },
    }, async (server) => {
      // A worker that lost its carrier: this server process counts it.
      await recorderForWorker(server.db, undefined, {
        application_id: "jobs-app",
        agent_id: "indexer",
        root_trace_id: "job-7",
      });
      const opened = await kit.open();
      const page = opened.page;
      await page.goto(
        loginUrlTo(server.loginUrl, "/traces/health"),
      );
      await page.locator("#counts").getByRole("link", { name: "conversation" })
        .click();
      await page.waitForURL(/\/traces\/find\?store=conversation/);
      assert.deepEqual(
        await page.locator(".group__title code").allTextContents(),
        ["conv-1"],
      );
      assert.equal(
        await page.locator("#f-store").inputValue(),
        "conversation",
        "the filter shows in the form",
      );
      await page.goBack();
      await page.locator("#counters").getByRole("link", {
        name: "find these events",
      }).click();
      await page.waitForURL(/kind=trace_context_missing/);
      assert.deepEqual(
        await page.locator(".group__title code").allTextContents(),
        ["job-7"],
      );
    });
  },
);

/** Paths a tenant-bound account may not open. */
const UNSCOPED_ONLY =
  /^\/(runs|targets|regressions|reference|compare)(\/|\?|\.|$)|^\/traces\/health/;

/** Every same-origin link of the page (path and query). */
async function linksOf(page: Page, origin: string): Promise<string[]> {
  const hrefs = await page.locator("a[href]").evaluateAll((nodes) =>
    nodes.map((n) => (n as HTMLAnchorElement).href)
  );
  return [
    ...new Set(
      hrefs.filter((href) => href.startsWith(origin)).map((href) => {
        const url = new URL(href);
        return `${url.pathname}${url.search}`;
      }),
    ),
  ];
}

/**
 * Asserts that no link of the page leads where a tenant-bound account may
 * not go, and that each link (visited once per test) answers without an
 * error for it.
 */
function linkChecker(page: Page, origin: string) {
  const seen = new Set<string>();
  return async (name: string): Promise<void> => {
    const links = await linksOf(page, origin);
    const forbidden = links.filter((link) => UNSCOPED_ONLY.test(link));
    assert.deepEqual(forbidden, [], `${name} links where it may not go`);
    for (const link of links) {
      if (seen.has(link) || link === "/logout") continue;
      seen.add(link);
      const response = await page.request.get(`${origin}${link}`);
      assert.ok(
        response.status() < 400,
        `${name}: ${link} answered ${response.status()}`,
      );
    }
  };
}

/** A deletion run's own events (application `trace`, root = run id), as the runner files them. */
const RUN_ID = "run-20261129T100000Z-000000000042";
const RUN_EVENTS = [
  { event_id: `${RUN_ID}:run`, parent_event_id: null, kind: "run" },
  {
    event_id: `${RUN_ID}:phase:baseline`,
    parent_event_id: `${RUN_ID}:run`,
    kind: "phase",
  },
].map((event, i) => ({
  ...event,
  application_id: "trace",
  agent_id: "trace-runner",
  root_trace_id: RUN_ID,
  run_id: RUN_ID,
  started_at: new Date(Date.UTC(2026, 10, 29, 9, 0, i)).toISOString(),
}));

browserTest(
  "a tenant-bound analyst lands on a page it may read, and no trace page links where it may not go",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const analyst: OpenPage = await kit.open();
      const page = analyst.page;
      await signIn(page, host.origin, "support-app1");
      assert.equal(new URL(page.url()).pathname, "/");
      await page.getByRole("link", { name: "Find incidents in your scope" })
        .click();
      await page.waitForURL(`${host.origin}/traces/find`);
      const visited: string[] = [];
      const links = linkChecker(page, host.origin);
      const check = async (name: string) => {
        visited.push(new URL(page.url()).pathname);
        await links(name);
      };
      await check("the finder");
      await page.locator(".group__title", { hasText: "root-1" }).click();
      await page.waitForURL(/\/traces\/inspect\?/);
      await page.locator(".wf-row").getByRole("link", {
        name: "evt-answer",
        exact: true,
      }).click();
      await check("the inspection");
      await page.getByRole("link", { name: "Event page" }).click();
      await page.waitForURL(/\/traces\/events\/evt-answer/);
      await check("the event page");
      await page.goto(
        `${host.origin}/traces/compare?baseline=root-1&candidate=root-anon`,
      );
      await check("the comparison");
      assert.deepEqual(visited, [
        "/traces/find",
        "/traces/inspect",
        "/traces/events/evt-answer",
        "/traces/compare",
      ]);
      await screenshot(page, "paths-tenant-compare");
    });
  },
);

browserTest(
  "an account bound to the runner's own application sees its runs' events, never a link to a run page",
  async (kit) => {
    await withHostServer({}, async (host) => {
      await ingestEvents(host.db, RUN_EVENTS);
      const token = "example-run-watcher-token";
      host.accounts.replace({
        ...EXAMPLE_ACCOUNTS,
        "run-watcher": { token, role: "analyst", application_id: "trace" },
      });
      const watcher = await kit.open();
      const page = watcher.page;
      await signIn(page, host.origin, { token }, "/traces/find");
      const links = linkChecker(page, host.origin);
      await page.locator(".group__title", { hasText: RUN_ID }).waitFor();
      await links("the finder");
      await page.locator(".group__title", { hasText: RUN_ID }).click();
      await page.waitForURL(/\/traces\/inspect\?/);
      await links("the inspection");
      await page.locator(".wf-row").getByRole("link", {
        name: `${RUN_ID}:run`,
      }).click();
      await page.getByRole("link", { name: "Event page" }).click();
      await page.waitForURL(/\/traces\/events\//);
      await links("the event page");
      // An unscoped viewer may read runs: the same pages link the run.
      const viewer = await kit.open();
      await signIn(viewer.page, host.origin, "viewer-1", "/traces/find");
      await viewer.page.locator(".group", { hasText: RUN_ID }).getByRole(
        "link",
        { name: `Open run ${RUN_ID}` },
      ).waitFor();
    });
  },
);

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  browserTest(
    `inspection with its operator controls and the finder with account resolution fit a ${name} screen`,
    async (kit) => {
      await withHostServer({}, async (host) => {
        const admin = await kit.open({ viewport });
        const page = admin.page;
        await signIn(
          page,
          host.origin,
          "admin-1",
          `${ROOT_1}&selected=evt-answer`,
        );
        await checkLayout(page, `paths-inspect-controls-${name}`);
        await page.goto(`${host.origin}/traces/find?q=root-1`);
        await checkLayout(page, `paths-find-account-${name}`);
        await page.goto(
          `${host.origin}/traces/events/evt-answer?application_id=app-1`,
        );
        await checkLayout(page, `paths-event-${name}`);
        const dark = await kit.openWithSession(admin, {
          viewport,
          colorScheme: "dark",
        });
        await dark.page.goto(`${host.origin}${ROOT_1}&selected=evt-answer`);
        await checkLayout(dark.page, `paths-inspect-controls-${name}-dark`);
      });
    },
  );
}

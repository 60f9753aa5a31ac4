/// <reference lib="dom" />
/**
 * Operator controls in a real browser, on the example host program
 * (`fixtures/host/`): refused and audited reveals, the 409 of an ambiguous
 * event id, a replay draft of one turn, controls disabled without hooks or
 * in read-only mode, a tenant-bound analyst editing the URL, and a session
 * that ends when its account is removed.
 */

import assert from "node:assert/strict";
import { listAudit } from "../../lib/auth/mod.ts";
import { ANSWER_PREVIEW, tokenOf } from "../operator_support.ts";
import { EXAMPLE_ACCOUNTS } from "../../fixtures/host/host.ts";
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
import { postFromPage } from "./_page.ts";

const APP1_ANSWER = "/traces/events/evt-answer?application_id=app-1";

browserTest(
  "a viewer sees the reveal control disabled with the reason, and a forged reveal is refused with 403",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const viewer = await kit.open();
      await signIn(viewer.page, host.origin, "viewer-1", APP1_ANSWER);
      const form = viewer.page.locator('form[data-control="reveal"]');
      assert.equal(
        await form.getByRole("button", { name: "Reveal content" }).isDisabled(),
        true,
      );
      assert.equal(
        await form.getByLabel("Reason (required, recorded)").isDisabled(),
        true,
      );
      await form.getByText(
        "revealing content needs the admin role or above; this account is viewer",
      ).waitFor();
      await screenshot(viewer.page, "operator-viewer-reveal-disabled");
      // A forged request from the page itself, with the session's CSRF token.
      await assertForgedRevealRefused(viewer, host, "just curious");
    });
  },
);

browserTest(
  "an admin reveals a preview with a reason: shown once, not cached, and recorded in the audit trail",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const admin = await kit.open();
      await signIn(admin.page, host.origin, "admin-1", APP1_ANSWER);
      assert.equal(
        await admin.page.locator("[data-revealed]").count(),
        0,
        "hidden until revealed",
      );
      assert.ok(!(await admin.page.content()).includes(ANSWER_PREVIEW));
      const form = admin.page.locator('form[data-control="reveal"]');
      await form.getByLabel("Reason (required, recorded)").fill(
        "SUP-1234 refund dispute",
      );
      const [response] = await Promise.all([
        admin.page.waitForResponse((r) => r.url().endsWith("/traces/reveal")),
        form.getByRole("button", { name: "Reveal content" }).click(),
      ]);
      assert.equal(response.status(), 200);
      assert.equal(await response.headerValue("cache-control"), "no-store");
      assert.equal(
        await admin.page.locator("[data-revealed]").textContent(),
        ANSWER_PREVIEW,
      );
      await screenshot(admin.page, "operator-admin-revealed");
      const [entry] = await listAudit(host.db, { action: "content.reveal" });
      assert.equal(entry?.operator, "admin-1");
      assert.equal(entry?.outcome, "succeeded");
      assert.equal(entry?.payload.reason, "SUP-1234 refund dispute");
      await admin.page.getByText(`audit trail as entry ${entry!.seq}`)
        .waitFor();
      // A reload hides the content: the page already stands at its event
      // page's address, so nothing is posted or recorded again.
      const eventPage = await admin.page.getByRole("link", {
        name: "Back to the event",
      }).getAttribute("href");
      assert.equal(
        new URL(admin.page.url()).pathname + new URL(admin.page.url()).search,
        eventPage,
      );
      const posts: string[] = [];
      admin.page.on("request", (r) => {
        if (r.method() === "POST") posts.push(r.url());
      });
      await admin.page.reload();
      assert.deepEqual(posts, []);
      assert.ok(!(await admin.page.content()).includes(ANSWER_PREVIEW));
      assert.equal(
        (await listAudit(host.db, { action: "content.reveal" })).length,
        1,
      );
    });
  },
);

browserTest(
  "an event id that names two events answers 409 until the admin names the turn",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const admin = await kit.open();
      const path =
        "/traces/events/evt-answer?agent_id=support-bot&root_trace_id=root-1";
      await signIn(admin.page, host.origin, "admin-1", path);
      await admin.page.getByText("This id names 2 events").waitFor();
      const form = admin.page.locator('form[data-control="reveal"]');
      assert.equal(await form.getByLabel("Turn (optional)").inputValue(), "");
      await form.getByLabel("Reason (required, recorded)").fill(
        "SUP-9 which one",
      );
      const [conflict] = await Promise.all([
        admin.page.waitForResponse((r) => r.url().endsWith("/traces/reveal")),
        form.getByRole("button", { name: "Reveal content" }).click(),
      ]);
      assert.equal(conflict.status(), 409);
      await admin.page.getByText("give turn_id or run_id").waitFor();
      assert.ok(!(await admin.page.content()).includes(ANSWER_PREVIEW));
      admin.allowed.push("status of 409");
      await screenshot(admin.page, "operator-reveal-409");
      await admin.page.goBack();
      await form.getByLabel("Turn (optional)").fill("turn-1");
      await form.getByLabel("Reason (required, recorded)").fill(
        "SUP-9 turn one",
      );
      await form.getByRole("button", { name: "Reveal content" }).click();
      assert.equal(
        await admin.page.locator("[data-revealed]").textContent(),
        ANSWER_PREVIEW,
      );
    });
  },
);

browserTest(
  "a replay draft of one turn freezes that turn's refs and leaves the other turn's resources out",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const analyst = await kit.open();
      await signIn(analyst.page, host.origin, "analyst-1", APP1_ANSWER);
      const form = analyst.page.locator('form[data-control="replay-draft"]');
      const [request] = await Promise.all([
        analyst.page.waitForRequest((r) => r.url().endsWith("/traces/replays")),
        form.getByRole("button", { name: "Create replay draft of turn turn-1" })
          .click(),
      ]);
      const sent = new URLSearchParams(request.postData() ?? "");
      assert.equal(sent.get("turn_id"), "turn-1");
      assert.equal(sent.get("application_id"), "app-1");
      assert.equal(sent.get("root_trace_id"), "root-1");
      await analyst.page.getByRole("heading", { name: "Replay draft created" })
        .waitFor();
      const refs = await analyst.page.locator("#draft-refs tbody th")
        .allTextContents();
      assert.deepEqual(refs, ["doc-1", "doc-2"]);
      assert.ok(
        !(await analyst.page.content()).includes("doc-9"),
        "turn-2's document is out",
      );
      await analyst.page.getByText("execution_enabled: false").waitFor();
      await screenshot(analyst.page, "operator-replay-draft");
      const [entry] = await listAudit(host.db, { action: "replay.draft" });
      assert.equal(entry?.operator, "analyst-1");
      assert.equal((entry?.payload.targets as { refs: number }).refs, 2);
    });
  },
);

browserTest(
  "without host hooks the artifact and replay controls are disabled and say why",
  async (kit) => {
    await withHostServer({ withoutHooks: true }, async (host) => {
      const admin = await kit.open();
      await signIn(admin.page, host.origin, "admin-1", APP1_ANSWER);
      const replay = admin.page.locator('form[data-control="replay-draft"]');
      assert.equal(await replay.getByRole("button").isDisabled(), true);
      await replay.getByText("This server has no resourceAuthorizer").waitFor();
      assert.equal(await replay.getByRole("link").count(), 0, "no plan link");
      const artifacts = admin.page.locator('[data-control="artifact"]');
      assert.ok(await artifacts.count() > 0);
      assert.deepEqual(
        [
          ...new Set(
            await artifacts.evaluateAll((nodes) =>
              nodes.map((n) => n.getAttribute("data-disabled-reason"))
            ),
          ),
        ],
        ["hook_missing"],
      );
      // A reveal needs no hook.
      const reveal = admin.page.locator('form[data-control="reveal"]');
      assert.equal(await reveal.getByRole("button").isDisabled(), false);
      await screenshot(admin.page, "operator-no-hooks");
    });
  },
);

browserTest(
  "a tenant-bound analyst cannot reach another application by editing the URL",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const analyst = await kit.open();
      await signIn(
        analyst.page,
        host.origin,
        "support-app1",
        "/traces/events/evt-answer",
      );
      assert.deepEqual(
        await analyst.page.locator("section h2").allTextContents(),
        ["llm_call in app-1, turn turn-1", "Reveal content"],
      );
      const edited = await analyst.page.goto(
        `${host.origin}/traces/events/evt-answer?application_id=app-2`,
      );
      assert.equal(edited?.status(), 403);
      await analyst.page.getByText("outside this account's scope").waitFor();
      assert.ok(!(await analyst.page.content()).includes("turn-9"));
      const twin = await analyst.page.goto(
        `${host.origin}/traces/events/evt-answer.json?application_id=app-2`,
      );
      assert.equal(twin?.status(), 403);
      const health = await analyst.page.goto(`${host.origin}/traces/health`);
      assert.equal(health?.status(), 403);
      analyst.allowed.push("status of 403");
      await screenshot(analyst.page, "operator-tenant-refused");
    });
  },
);

browserTest(
  "read-only mode: the draft control is disabled, a forged draft is refused, the inert plan still answers",
  async (kit) => {
    await withHostServer({ readOnly: true }, async (host) => {
      const analyst = await kit.open();
      await signIn(analyst.page, host.origin, "analyst-1", APP1_ANSWER);
      const form = analyst.page.locator('form[data-control="replay-draft"]');
      assert.equal(await form.getByRole("button").isDisabled(), true);
      await form.getByText("This server is read-only (TRACE_UI_READ_ONLY=true)")
        .waitFor();
      const forged = await postFromPage(analyst.page, "/traces/replays", {
        agent_id: "support-bot",
        root_trace_id: "root-1",
        application_id: "app-1",
      }, "form");
      assert.equal(forged.status, 403);
      analyst.allowed.push("status of 403");
      // The plan link still answers: it stores nothing.
      const href = await form.getByRole("link", { name: /Replay plan/ })
        .getAttribute("href");
      const plan = await analyst.page.evaluate(async (url) => {
        const response = await fetch(url!);
        return [response.status, await response.json()] as const;
      }, href);
      assert.equal(plan[0], 200);
      assert.equal(plan[1].execution_enabled, false);
    });
  },
);

browserTest(
  "a session ends at its next request once its account is removed",
  async (kit) => {
    await withHostServer({}, async (host) => {
      const analyst = await kit.open();
      await signIn(analyst.page, host.origin, "analyst-1", APP1_ANSWER);
      const { "analyst-1": _gone, ...rest } = EXAMPLE_ACCOUNTS;
      host.accounts.replace(rest);
      await analyst.page.reload();
      assert.equal(new URL(analyst.page.url()).pathname, "/login");
      assert.equal(
        new URL(analyst.page.url()).searchParams.get("next"),
        APP1_ANSWER,
      );
      assert.deepEqual(
        await analyst.context.cookies(),
        [],
        "the dead cookie was cleared",
      );
      await analyst.page.getByLabel("Operator token").fill(
        tokenOf("analyst-1"),
      );
      await analyst.page.getByRole("button", { name: "Sign in" }).click();
      await analyst.page.getByText("That token is not valid for this server.")
        .waitFor();
      analyst.allowed.push("status of 403");
    });
  },
);

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  browserTest(
    `the event page at ${name} size never scrolls sideways, in light and dark`,
    async (kit) => {
      await withHostServer({}, async (host) => {
        const admin: OpenPage = await kit.open({ viewport });
        await signIn(admin.page, host.origin, "admin-1", APP1_ANSWER);
        await checkLayout(admin.page, `operator-event-${name}`);
        const dark = await kit.openWithSession(admin, {
          viewport,
          colorScheme: "dark",
        });
        await dark.page.goto(`${host.origin}${APP1_ANSWER}`);
        await screenshot(dark.page, `operator-event-${name}-dark`);
      });
    },
  );
}

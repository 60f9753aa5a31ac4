/** Refused attempts at privileged actions: one audit entry each for a signed-in operator, none before anyone is signed in. */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { createApp } from "../routes/app.ts";
import { SMALL_BODY_MAX_BYTES } from "../routes/_body.ts";
import { seed, TEST_KEY, withErasureDb } from "./erasure_support.ts";
import {
  ask,
  auditRows,
  REVEAL,
  signInAs,
  tokenOf,
  withHost,
} from "./operator_support.ts";

/** The payloads of the entries appended since `from` (a count of rows). */
async function entriesSince(
  db: TraceDb,
  from: number,
): Promise<Record<string, unknown>[]> {
  return (await auditRows(db)).slice(from).map((row) =>
    JSON.parse(String(row.payload))
  );
}

/** `[operator, action, outcome, detail]` of each entry. */
function summary(entries: Record<string, unknown>[]): unknown[][] {
  return entries.map((e) => [e.operator, e.action, e.outcome, e.detail]);
}

const EMAIL = "ada.lovelace@example.com";

Deno.test("a signed-in operator's refused privileged request leaves one audit entry naming why, and none of what it sent", async (t) => {
  await withHost({}, async ({ app, db }) => {
    const { cookie, csrf } = await signInAs(app, "admin-1");
    const reveal = (json: Record<string, unknown>) => () =>
      ask(app, "POST", "/traces/reveal", { as: "admin-1", json });
    const cases: {
      name: string;
      send: () => Promise<Response>;
      status: number;
      entry: unknown[];
    }[] = [
      {
        name: "a session reveal without its CSRF token",
        send: () =>
          ask(app, "POST", "/traces/reveal", { cookie, json: REVEAL }),
        status: 403,
        entry: ["admin-1", "content.reveal", "refused", "csrf"],
      },
      {
        name: "a reveal whose reason holds an email address",
        send: reveal({ ...REVEAL, reason: `customer ${EMAIL} asked` }),
        status: 400,
        entry: [
          "admin-1",
          "content.reveal",
          "refused",
          "invalid_request:reason",
        ],
      },
      {
        name: "a reveal with an unknown field (which may be a value)",
        send: reveal({ ...REVEAL, [EMAIL]: true }),
        status: 400,
        entry: ["admin-1", "content.reveal", "refused", "invalid_request"],
      },
      {
        name: "a reveal body past its bound",
        send: reveal({ ...REVEAL, reason: "x".repeat(SMALL_BODY_MAX_BYTES) }),
        status: 413,
        entry: ["admin-1", "content.reveal", "refused", "payload_too_large"],
      },
      {
        name: "a reveal by GET",
        send: () => ask(app, "GET", "/traces/reveal", { as: "admin-1" }),
        status: 405,
        entry: ["admin-1", "content.reveal", "refused", "method_not_allowed"],
      },
      {
        name: "an account resolution with a query string",
        send: () =>
          ask(app, "POST", `/traces/account/resolve?email=${EMAIL}`, {
            as: "ops-1",
            json: { email: EMAIL },
          }),
        status: 400,
        entry: ["ops-1", "account.resolve", "refused", "query_string"],
      },
      {
        name: "an account resolution without an email",
        send: () =>
          ask(app, "POST", "/traces/account/resolve", {
            as: "ops-1",
            json: { email: "not-an-address" },
          }),
        status: 400,
        entry: ["ops-1", "account.resolve", "refused", "invalid_request:email"],
      },
      {
        name: "a replay draft without its CSRF token",
        send: () =>
          ask(app, "POST", "/traces/replays", {
            cookie,
            json: { agent_id: "support-bot", root_trace_id: "root-1" },
          }),
        status: 403,
        entry: ["admin-1", "replay.draft", "refused", "csrf"],
      },
      {
        name: "an artifact lookup with a parameter given twice",
        send: () =>
          ask(app, "GET", "/traces/artifact.json?type=doc&id=a&id=b", {
            as: "analyst-1",
          }),
        status: 400,
        entry: ["analyst-1", "artifact.lookup", "refused", "invalid_request"],
      },
      {
        name: "a session erasure without its CSRF token",
        send: () =>
          ask(app, "POST", "/api/erasures", {
            cookie,
            json: { subject: { application_id: "app-1", user_id: "user-ada" } },
          }),
        status: 403,
        entry: ["admin-1", "subject.erase", "refused", "csrf"],
      },
      {
        name: "an erasure on a server without the erasure key",
        send: () =>
          ask(app, "POST", "/api/erasures", {
            cookie,
            csrf,
            json: { subject: { application_id: "app-1", user_id: "user-ada" } },
          }),
        status: 501,
        entry: ["admin-1", "subject.erase", "failed", "erasure_key_missing"],
      },
    ];
    for (const { name, send, status, entry } of cases) {
      await t.step(name, async () => {
        const before = (await auditRows(db)).length;
        const response = await send();
        assert.equal(response.status, status, await response.clone().text());
        // Bad input answers one code, whichever check refused it.
        if (status === 400) {
          const body = await response.clone().json();
          assert.equal(body.error.code, "invalid_request");
        }
        await response.body?.cancel();
        const entries = await entriesSince(db, before);
        assert.deepEqual(summary(entries), [entry]);
        const stored = JSON.stringify(entries);
        for (const secret of [EMAIL, "ada.lovelace", csrf, "user-ada"]) {
          assert.ok(!stored.includes(secret), `the entry holds ${secret}`);
        }
        assert.deepEqual(entries[0]!.targets, {});
        assert.equal(entries[0]!.reason, null);
      });
    }
  });
});

Deno.test("a reveal refused for role is refused before its body is read, and recorded once", async () => {
  await withHost({}, async ({ app, db }) => {
    const response = await ask(app, "POST", "/traces/reveal", {
      as: "viewer-1",
      json: { ...REVEAL, reason: "x".repeat(SMALL_BODY_MAX_BYTES) },
    });
    assert.equal(response.status, 403);
    assert.match(await response.text(), /needs the admin role/);
    assert.deepEqual(summary(await entriesSince(db, 0)), [
      ["viewer-1", "content.reveal", "refused", "role"],
    ]);
  });
});

Deno.test("a missing host hook is recorded as failed, and an action that ran is recorded once", async () => {
  await withHost({ withoutHooks: true }, async ({ app, db }) => {
    const plan = await ask(
      app,
      "GET",
      "/traces/replay-plan.json?agent_id=support-bot&root_trace_id=root-1",
      { as: "analyst-1" },
    );
    assert.equal(plan.status, 501);
    await plan.body?.cancel();
    const reveal = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: REVEAL,
    });
    assert.equal(reveal.status, 200);
    await reveal.body?.cancel();
    const missing = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: { ...REVEAL, event_id: "evt-none" },
    });
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
    assert.deepEqual(summary(await entriesSince(db, 0)), [
      [
        "analyst-1",
        "replay.plan",
        "failed",
        "hook_missing:resourceAuthorizer",
      ],
      ["admin-1", "content.reveal", "succeeded", null],
      ["admin-1", "content.reveal", "failed", "not_found"],
    ]);
  });
});

Deno.test("refusals before anyone is signed in leave no audit entry", async () => {
  await withHost({}, async ({ app, db }) => {
    const refused = [
      // A token no account holds.
      await ask(app, "POST", "/traces/reveal", {
        token: "not-a-known-token-000000",
        json: REVEAL,
      }),
      // No token and no session.
      await ask(app, "POST", "/traces/reveal", { json: REVEAL }),
      // A valid token sent by another site's page: refused before sign-in.
      await ask(app, "POST", "/traces/reveal", {
        token: tokenOf("admin-1"),
        json: REVEAL,
        headers: { "sec-fetch-site": "cross-site" },
      }),
      // A valid token on a body without a Content-Type: refused before sign-in.
      await app.request("http://127.0.0.1:8788/traces/reveal", {
        method: "POST",
        headers: {
          host: "127.0.0.1:8788",
          authorization: `Bearer ${tokenOf("admin-1")}`,
        },
        body: new TextEncoder().encode(JSON.stringify(REVEAL)),
      }),
    ];
    assert.deepEqual(refused.map((r) => r.status), [401, 401, 403, 415]);
    for (const response of refused) await response.body?.cancel();
    assert.deepEqual(await auditRows(db), []);
  });
});

Deno.test("a privileged GET a page of another site or port sends with the session cookie is refused unaudited", async () => {
  await withHost({}, async ({ app, db }) => {
    const { cookie } = await signInAs(app, "analyst-1");
    const plan =
      "/traces/replay-plan.json?agent_id=support-bot&root_trace_id=root-1&turn_id=turn-1&application_id=app-1&reason=bulk+export";
    const lookup = "/traces/artifact.json?type=doc&id=doc-1";
    // A top-level navigation from a page on another port of this host
    // (same-site: the SameSite=Strict cookie goes with it), from another
    // site, and from a browser without Fetch Metadata, by its Referer.
    const foreign = [
      { "sec-fetch-site": "same-site", "sec-fetch-mode": "navigate" },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
      { referer: "http://127.0.0.1:3000/page" },
    ];
    for (const path of [plan, lookup]) {
      for (const headers of foreign) {
        const response = await ask(app, "GET", path, { cookie, headers });
        assert.equal(
          response.status,
          403,
          `${path} ${JSON.stringify(headers)}`,
        );
        assert.match(await response.text(), /only from Trace's own pages/);
      }
    }
    assert.deepEqual(await auditRows(db), []);
    // From Trace's own pages, or typed into the address bar, it runs.
    for (
      const headers of [
        { "sec-fetch-site": "same-origin" },
        { "sec-fetch-site": "none", "sec-fetch-mode": "navigate" },
        { referer: "http://127.0.0.1:8788/traces/inspect" },
      ]
    ) {
      const response = await ask(app, "GET", plan, { cookie, headers });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    assert.equal((await auditRows(db)).length, 3);
  });
});

Deno.test("POST /api/erasures: a refused request is recorded once, through the erasure audit when its subject was read", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const ADMIN = "admin-token-0123456789";
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      app.request("http://127.0.0.1/api/erasures", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${ADMIN}`,
          ...headers,
        },
        body: JSON.stringify(body),
      });
    const subject = { application_id: "app", user_id: "alice" };
    const answers = [
      await post({ subject, apply: true }),
      await post({ subject: { application_id: "app" } }),
      await post({ subject, force: true }),
    ];
    assert.deepEqual(answers.map((a) => a.status), [400, 400, 400]);
    for (const answer of answers) await answer.body?.cancel();
    const entries = await entriesSince(db, 0);
    assert.deepEqual(
      entries.map((e) => [e.action, e.outcome, String(e.detail).split(";")[0]]),
      [
        ["subject.erase", "refused", "confirmation_missing"],
        ["subject.erase", "refused", "invalid_request"],
        ["subject.erase", "refused", "invalid_request"],
      ],
    );
    // The subject was read: its entry names it by its keyed digest only.
    assert.match(
      String(entries[0]!.detail),
      /^confirmation_missing; obs\.erasure\.apply user hmac-sha256:[0-9a-f]{64} request \S+$/,
    );
    assert.ok(!JSON.stringify(entries).includes("alice"));
  });
});

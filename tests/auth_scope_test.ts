/** Tenant scope on every reader: the API's queries, the event page and its twin, for each scope key, anonymous included. */

import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { AccountBook } from "../lib/auth/mod.ts";
import { EXAMPLE_ACCOUNTS } from "../fixtures/host/host.ts";
import {
  ask,
  jsonOf,
  type Operator,
  signInAs,
  withHost,
} from "./operator_support.ts";

/** The event ids an operator's query of `/api/events` returns. */
async function eventIds(
  app: Parameters<typeof ask>[0],
  as: Operator,
  query = "",
): Promise<string[]> {
  const response = await ask(app, "GET", `/api/events${query}`, { as });
  const body = await jsonOf(response);
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.events.map((e: { event_id: string; application_id: string }) =>
    `${e.application_id}/${e.event_id}`
  ).sort();
}

Deno.test("an operator's scope binds /api/events and its summary; ingest clients still read every tenant", async () => {
  await withHost({}, async ({ app }) => {
    const all = await (await ask(app, "GET", "/api/events")).json();
    assert.ok(
      all.events.some((e: { application_id: string }) =>
        e.application_id === "app-2"
      ),
    );
    const app1 = await eventIds(app, "support-app1");
    assert.ok(app1.length > 0 && app1.every((id) => id.startsWith("app-1/")));
    assert.deepEqual(await eventIds(app, "anon-viewer"), ["app-1/evt-anon"]);
    const ada = await eventIds(app, "ada-viewer");
    assert.ok(ada.length > 0 && !ada.includes("app-1/evt-anon"));
    const summary = await jsonOf(
      await ask(app, "GET", "/api/events/summary", { as: "anon-viewer" }),
    );
    assert.equal(summary.events, 1);
  });
});

Deno.test("query parameters only narrow: each scope key, anonymous included, is refused when it widens", async (t) => {
  await withHost({}, async ({ app }) => {
    const cases: [Operator, string, "ok" | "refused"][] = [
      ["support-app1", "?application_id=app-1", "ok"],
      ["support-app1", "?application_id=app-2", "refused"],
      ["support-app1", "?user_id=user-ada", "ok"],
      ["support-app1", "?anonymous=true", "ok"],
      ["ada-viewer", "?user_id=user-ada", "ok"],
      ["ada-viewer", "?user_id=user-bo", "refused"],
      ["ada-viewer", "?anonymous=true", "refused"],
      ["ada-viewer", "?application_id=app-2", "refused"],
      ["anon-viewer", "?anonymous=true", "ok"],
      ["anon-viewer", "?user_id=user-ada", "refused"],
      ["anon-viewer", "?application_id=app-2", "refused"],
      ["viewer-1", "?application_id=app-2", "ok"],
    ];
    for (const [as, query, expected] of cases) {
      await t.step(`${as} ${query}`, async () => {
        for (
          const path of [
            "/api/events",
            "/api/events/summary",
            "/traces/events/evt-answer.json",
          ]
        ) {
          const response = await ask(app, "GET", path + query, { as });
          const text = await response.text();
          if (expected === "ok") {
            // The event page answers 404 when the narrowing leaves its event out.
            const status = path.startsWith("/traces/events/") &&
                response.status === 404
              ? 200
              : response.status;
            assert.equal(status, 200, `${path}: ${text}`);
          } else {
            assert.equal(response.status, 403, `${path}: ${text}`);
            assert.match(text, /outside this account's scope/);
            assert.ok(
              !text.includes("app-2") && !text.includes("user-bo"),
              text,
            );
          }
        }
      });
    }
  });
});

Deno.test("the finder's selected_application_id only narrows too", async () => {
  await withHost({}, async ({ app }) => {
    for (
      const [as, app_id, expected] of [
        ["support-app1", "app-1", 200],
        ["support-app1", "app-2", 403],
        ["viewer-1", "app-2", 200],
      ] as const
    ) {
      const response = await ask(
        app,
        "GET",
        `/traces/find.json?selected=evt-answer&selected_application_id=${app_id}`,
        { as },
      );
      const text = await response.text();
      assert.equal(response.status, expected, `${as} ${app_id}: ${text}`);
      if (expected === 403) {
        assert.match(text, /outside this account's scope/);
        assert.ok(!text.includes("app-2"), text);
      }
    }
  });
});

Deno.test("a tenant-bound analyst cannot reach another application's event by editing the URL", async () => {
  await withHost({}, async ({ app }) => {
    const { cookie } = await signInAs(app, "support-app1");
    const mine = await ask(app, "GET", "/traces/events/evt-answer", { cookie });
    const html = await mine.text();
    assert.equal(mine.status, 200);
    assert.match(html, /llm_call in app-1, turn turn-1/);
    assert.doesNotMatch(html, /app-2|turn-9|doc-77/);
    const edited = await ask(
      app,
      "GET",
      "/traces/events/evt-answer?application_id=app-2",
      {
        cookie,
        headers: { accept: "text/html" },
      },
    );
    assert.equal(edited.status, 403);
    const refused = await edited.text();
    assert.match(
      refused,
      /outside this account&#39;s scope|outside this account's scope/,
    );
    assert.doesNotMatch(refused, /turn-9|doc-77|reset your password/);
    // Pages beyond the trace routes are closed to it.
    const health = await ask(app, "GET", "/traces/health", {
      cookie,
      headers: { accept: "text/html" },
    });
    assert.equal(health.status, 403);
    assert.match(
      await health.text(),
      /bound to one tenant and reaches the traces of that tenant only; /,
    );
  });
});

Deno.test("with TRACE_INGEST_TOKEN set the API keeps its own credential: operator tokens and sessions do not open it", async () => {
  await withHost({}, async ({ db }) => {
    const app = createApp({
      db,
      log: () => {},
      ingestToken: "ingest-token-0123456789",
      accounts: new AccountBook(EXAMPLE_ACCOUNTS),
    });
    const withAccount = await ask(app, "GET", "/api/events", { as: "admin-1" });
    assert.equal(withAccount.status, 401);
    await withAccount.body?.cancel();
    const { cookie } = await signInAs(app, "support-app1");
    const withCookie = await ask(app, "GET", "/api/events", { cookie });
    assert.equal(withCookie.status, 401);
    await withCookie.body?.cancel();
    const ingest = await ask(app, "GET", "/api/events?application_id=app-2", {
      token: "ingest-token-0123456789",
    });
    assert.equal(ingest.status, 200);
    await ingest.body?.cancel();
  });
});

Deno.test("on an open API a session write needs its CSRF token in the header, and the operator's role", async () => {
  await withHost({}, async ({ app }) => {
    const event = [{
      application_id: "app-1",
      agent_id: "support-bot",
      event_id: "evt-new",
      kind: "retrieval",
    }];
    const viewer = await signInAs(app, "viewer-1");
    const noToken = await ask(app, "POST", "/api/events", {
      cookie: viewer.cookie,
      json: event,
    });
    assert.equal(noToken.status, 403);
    assert.match(
      await noToken.text(),
      /writing to the trace index needs the admin role/,
    );
    const admin = await signInAs(app, "admin-1");
    const forged = await ask(app, "POST", "/api/events", {
      cookie: admin.cookie,
      json: event,
    });
    assert.equal(forged.status, 403);
    assert.match(await forged.text(), /CSRF token is missing/);
    const ok = await ask(app, "POST", "/api/events", { ...admin, json: event });
    assert.equal(ok.status, 200, await ok.text());
  });
});

Deno.test("UI writes are bounded before anything reads them", async () => {
  await withHost({}, async ({ app }) => {
    const { cookie, csrf } = await signInAs(app, "admin-1");
    const response = await ask(app, "POST", "/traces/reveal", {
      cookie,
      form: {
        _csrf: csrf,
        agent_id: "support-bot",
        root_trace_id: "root-1",
        event_id: "evt-answer",
        reason: "x".repeat(70 * 1024),
      },
    });
    assert.equal(response.status, 413);
    await response.body?.cancel();
  });
});

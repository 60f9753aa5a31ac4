/** Account resolution and artifact lookups through the host's hooks: scope, content-free failures, emails kept out of everything. */

import assert from "node:assert/strict";
import {
  AccountBook,
  HookError,
  resolveArtifact,
  resolveIdentity,
} from "../lib/auth/mod.ts";
import { createApp } from "../routes/app.ts";
import {
  ask,
  auditRows,
  jsonOf,
  signInAs,
  withHost,
} from "./operator_support.ts";
import { withDb } from "./_helpers.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { seedExampleTraces } from "../fixtures/host/traces.ts";

const EMAIL = "ada@example.com";

Deno.test("an operator resolves an email sent in the POST body to a user id, and the email is kept nowhere", async () => {
  await withHost({}, async ({ app, db, logs }) => {
    const response = await ask(app, "POST", "/traces/account/resolve", {
      as: "ops-1",
      json: { email: EMAIL },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("cache-control"), "no-store");
    const body = await jsonOf(response);
    assert.equal(body.user_id, "user-ada");
    assert.equal(body.application_id, "app-1");
    assert.equal(
      body.find,
      "/traces/find?user_id=user-ada&application_id=app-1",
    );
    assert.ok(!JSON.stringify(body).includes(EMAIL), "the email was echoed");
    const rows = await auditRows(db);
    const entry = JSON.parse(String(rows.at(-1)!.payload));
    assert.equal(entry.action, "account.resolve");
    assert.match(entry.targets.user_id, /^hmac-sha256:/);
    const everything = JSON.stringify(rows) + logs.join("\n");
    assert.ok(!everything.includes(EMAIL) && !everything.includes("user-ada"));
    // Nothing about the email in any other table either.
    const tables = await db.client.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table'",
    );
    for (const { name } of tables.rows) {
      const dump = await db.client.execute(`SELECT * FROM "${String(name)}"`);
      assert.ok(
        !JSON.stringify(dump.rows).includes(EMAIL),
        `table ${String(name)} holds the email`,
      );
    }
  });
});

Deno.test("account resolution refuses emails in URLs, never echoes one in an error, and needs the operator role", async () => {
  await withHost({}, async ({ app, logs, store }) => {
    const inUrl = await ask(
      app,
      "POST",
      `/traces/account/resolve?email=${EMAIL}`,
      {
        as: "ops-1",
        json: {},
      },
    );
    assert.equal(inUrl.status, 400);
    assert.ok(!(await inUrl.text()).includes(EMAIL));
    const get = await ask(
      app,
      "GET",
      `/traces/account/resolve?email=${EMAIL}`,
      { as: "ops-1" },
    );
    assert.equal(get.status, 405);
    assert.ok(!(await get.text()).includes(EMAIL));
    for (
      const json of [{ email: "not an email ada@example" }, {
        email: EMAIL,
        extra: EMAIL,
      }, { [EMAIL]: 1 }]
    ) {
      const bad = await ask(app, "POST", "/traces/account/resolve", {
        as: "ops-1",
        json,
      });
      assert.equal(bad.status, 400, JSON.stringify(json));
      const text = await bad.text();
      assert.ok(!text.includes("ada@example"), text);
    }
    const analyst = await ask(app, "POST", "/traces/account/resolve", {
      as: "analyst-1",
      json: { email: EMAIL },
    });
    assert.equal(analyst.status, 403);
    assert.equal(store.calls.identityResolver, 0, "the hook was never asked");
    // The example host has no account for this email: a plain not found, repeating nothing of it.
    const unknown = await ask(app, "POST", "/traces/account/resolve", {
      as: "ops-1",
      json: { email: "zed@example.com" },
    });
    assert.equal(unknown.status, 404);
    const text = await unknown.text();
    assert.equal(JSON.parse(text).error.code, "not_found");
    assert.match(
      text,
      /^\{"error":\{"code":"not_found","message":"No account in your scope matches this email; check the address/,
    );
    assert.ok(!text.includes("zed@") && !logs.join("\n").includes("zed@"));
    assert.match(logs.join("\n"), /hook: identityResolver no_match/);
  });
});

Deno.test("a resolver answer outside the operator's scope, or malformed, is refused", async () => {
  const scope = { application_id: "app-1" };
  await assert.rejects(
    Promise.resolve(
      resolveIdentity(() => ({ user_id: "u", application_id: "app-2" }), {
        email: EMAIL,
        scope,
      }),
    ),
    /No account in your scope matches this email/,
  );
  await assert.rejects(
    Promise.resolve(
      resolveIdentity(() => null, { email: EMAIL, scope }),
    ),
    (error: unknown) =>
      error instanceof HookError && error.failure === "no_match" &&
      error.code === "not_found" &&
      /^No account in your scope matches this email;/.test(error.message),
  );
  await assert.rejects(
    Promise.resolve(
      resolveIdentity(() => ({ user_id: "u" }), {
        email: EMAIL,
        scope: { user_id: "v" },
      }),
    ),
    (error: unknown) =>
      error instanceof HookError && error.failure === "out_of_scope",
  );
  for (
    const answer of [undefined, {}, { user_id: "" }, {
      user_id: "x".repeat(257),
    }, {
      user_id: 7,
    }, "user-ada"]
  ) {
    await assert.rejects(
      Promise.resolve(
        resolveIdentity(() => answer as never, { email: EMAIL, scope: {} }),
      ),
      /identityResolver answered something other than the required result/,
      JSON.stringify(answer),
    );
  }
  // Async resolvers, and resolvers that never answer.
  assert.deepEqual(
    await resolveIdentity(() => Promise.resolve({ user_id: "u-1" }), {
      email: EMAIL,
      scope: {},
    }),
    { user_id: "u-1" },
  );
  await assert.rejects(
    resolveIdentity(() => new Promise(() => {}), { email: EMAIL, scope: {} }, {
      timeoutMs: 20,
    }),
    /identityResolver did not answer in time/,
  );
});

Deno.test("an email of another tenant, an unknown email and a resolver that throws get the same not found; the audit trail tells them apart", async () => {
  await withHost({}, async ({ app, accounts, db, logs, store }) => {
    accounts.replace({
      "ops-app1": {
        token: "example-ops-app1-token-0001",
        role: "operator",
        application_id: "app-1",
      },
    });
    const resolve = async (email: string) => {
      const response = await ask(app, "POST", "/traces/account/resolve", {
        token: "example-ops-app1-token-0001",
        json: { email },
      });
      return [response.status, await response.text()];
    };
    const answers = [
      await resolve("bo@example.com"),
      await resolve("zed@example.com"),
    ];
    // A host that says "unknown" by throwing, as hosts did before `null`.
    store.resolveIdentity = (request) => {
      throw new Error(`no account for ${request.email}`);
    };
    answers.push(await resolve("zed@example.com"));
    assert.deepEqual(answers[0], answers[1], "the answers differ");
    assert.deepEqual(answers[0], answers[2], "the answers differ");
    assert.equal(answers[0]![0], 404);
    assert.match(
      String(answers[0]![1]),
      /"code":"not_found","message":"No account in your scope matches this email/,
    );
    assert.doesNotMatch(String(answers[0]![1]), /bo@|zed@|user-bo|app-2/);
    const rows = (await auditRows(db)).slice(-3).map((row) => {
      const entry = JSON.parse(String(row.payload));
      return [entry.outcome, entry.detail];
    });
    assert.deepEqual(rows, [
      ["refused", "identityResolver:out_of_scope"],
      ["failed", "identityResolver:no_match"],
      ["failed", "identityResolver:threw"],
    ]);
    assert.doesNotMatch(logs.join("\n"), /bo@|zed@|user-bo/);
  });
});

Deno.test("artifact lookups: ownership must be verified, the ref must be evidence in scope, and the answer is audited", async () => {
  await withHost({}, async ({ app, store, db }) => {
    const ok = await ask(
      app,
      "GET",
      "/traces/artifact.json?type=doc&id=doc-1&application_id=app-1",
      { as: "analyst-1" },
    );
    assert.equal(ok.status, 200);
    const body = await jsonOf(ok);
    assert.deepEqual(body.state, {
      ownership_verified: true,
      exists: true,
      version: "v3",
      title_fingerprint: body.state.title_fingerprint,
    });
    assert.match(body.state.title_fingerprint, /^sha256:[0-9a-f]{16}$/);
    assert.ok(!JSON.stringify(body).includes("Refund policy"));
    // app-1's analyst cannot look up app-2's document, nor ask for app-2.
    const foreign = await ask(
      app,
      "GET",
      "/traces/artifact.json?type=doc&id=doc-77",
      { as: "support-app1" },
    );
    assert.equal(foreign.status, 404);
    const wider = await ask(
      app,
      "GET",
      "/traces/artifact.json?type=doc&id=doc-77&application_id=app-2",
      { as: "support-app1" },
    );
    assert.equal(wider.status, 403);
    const calls = store.calls.artifactResolver;
    const viewer = await ask(
      app,
      "GET",
      "/traces/artifact.json?type=doc&id=doc-1",
      { as: "viewer-1" },
    );
    assert.equal(viewer.status, 403);
    assert.equal(store.calls.artifactResolver, calls);
    const entries = (await auditRows(db)).map((r) =>
      JSON.parse(String(r.payload))
    );
    assert.deepEqual(entries.map((e) => [e.operator, e.outcome]), [
      ["analyst-1", "succeeded"],
      ["support-app1", "failed"],
      ["support-app1", "refused"],
      ["viewer-1", "refused"],
    ]);
    assert.equal(entries[0].targets.resource.type, "doc");
    assert.match(entries[0].targets.resource.id, /^hmac-sha256:/);
  });
  await assert.rejects(
    resolveArtifact(() => ({ exists: true }) as never, {
      ref: { type: "doc", id: "d" },
      scope: {},
    }),
    /artifactResolver answered something other than the required result/,
  );
  await assert.rejects(
    resolveArtifact(() => ({ ownership_verified: "yes" }) as never, {
      ref: { type: "doc", id: "d" },
      scope: {},
    }),
    /required result/,
  );
});

Deno.test("without hooks the lookups answer 501, the controls are disabled with the reason, and capabilities say so", async () => {
  await withHost({ withoutHooks: true }, async ({ app }) => {
    const resolve = await ask(app, "POST", "/traces/account/resolve", {
      as: "admin-1",
      json: { email: EMAIL },
    });
    assert.equal(resolve.status, 501);
    const resolveBody = await jsonOf(resolve);
    assert.equal(resolveBody.error.code, "hook_missing");
    assert.match(
      resolveBody.error.message,
      /no identityResolver: the host program passes one to createApp/,
    );
    const artifact = await ask(
      app,
      "GET",
      "/traces/artifact.json?type=doc&id=doc-1",
      { as: "admin-1" },
    );
    assert.equal(artifact.status, 501);
    assert.equal((await jsonOf(artifact)).error.code, "hook_missing");
    const plan = await ask(
      app,
      "GET",
      "/traces/replay-plan.json?agent_id=support-bot&root_trace_id=root-1&application_id=app-1",
      { as: "admin-1" },
    );
    assert.equal(plan.status, 501);
    assert.equal((await jsonOf(plan)).error.code, "hook_missing");
    const twin = await jsonOf(
      await ask(
        app,
        "GET",
        "/traces/events/evt-answer.json?application_id=app-1",
        { as: "admin-1" },
      ),
    );
    assert.equal(twin.controls.artifact_lookup.allowed, false);
    assert.equal(twin.controls.artifact_lookup.reason, "hook_missing");
    assert.equal(twin.controls.replay_draft.reason, "hook_missing");
    assert.equal(twin.controls.reveal.allowed, true, "a reveal needs no hook");
    const { cookie } = await signInAs(app, "admin-1");
    const html = await (await ask(
      app,
      "GET",
      "/traces/events/evt-answer?application_id=app-1",
      { cookie },
    )).text();
    assert.match(html, /Create replay draft of turn turn-1<\/button>/);
    assert.match(html, /<button type="submit" disabled>Create replay draft/);
    assert.match(
      html,
      /no resourceAuthorizer: the host program passes one to createApp/,
    );
  });
});

Deno.test("hook errors and results never leave the server in another shape: a host without accounts still works", async () => {
  await withDb(async (db) => {
    await migrate(db, ALL_MIGRATIONS);
    await seedExampleTraces(db);
    const app = createApp({
      db,
      log: () => {},
      accounts: new AccountBook({
        o: { token: "operator-token-0123456789", role: "operator" },
      }),
      artifactResolver: () => {
        throw new Error("secret content from the host");
      },
    });
    const response = await ask(
      app,
      "GET",
      "/traces/artifact.json?type=doc&id=doc-1",
      { token: "operator-token-0123456789" },
    );
    assert.equal(response.status, 502);
    const text = await response.text();
    assert.ok(!text.includes("secret content"));
    assert.equal(JSON.parse(text).error.code, "hook_failed");
    assert.match(text, /The host's artifactResolver failed/);
  });
});

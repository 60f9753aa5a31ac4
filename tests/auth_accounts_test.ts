/** Operator accounts: validation of TRACE_UI_AUTH_ACCOUNTS, the directory, replacement and sessions. */

import assert from "node:assert/strict";
import {
  AccountBook,
  checkAccounts,
  createOperatorDirectory,
  parseAccounts,
} from "../lib/auth/mod.ts";
import { ConfigError } from "../lib/errors.ts";
import { ask, jsonOf, signInAs, withHost } from "./operator_support.ts";

const TOKEN_A = "account-token-aaaaaaaaaaaa";
const TOKEN_B = "account-token-bbbbbbbbbbbb";

Deno.test("parseAccounts() reads names, roles and scopes; a present null user_id binds anonymous evidence", () => {
  const accounts = parseAccounts(JSON.stringify({
    "reader-1": { token: TOKEN_A, role: "viewer", application_id: "app-1" },
    "anon-1": { token: TOKEN_B, role: "analyst", user_id: null },
  }));
  assert.deepEqual(accounts["reader-1"], {
    token: TOKEN_A,
    role: "viewer",
    application_id: "app-1",
  });
  const directory = createOperatorDirectory({ accounts });
  assert.deepEqual(directory.resolve("anon-1")?.scope, { user_id: null });
  assert.deepEqual(directory.resolve("reader-1")?.scope, {
    application_id: "app-1",
  });
  assert.equal(directory.hasTenantBoundAccounts(), true);
});

Deno.test("a bad account configuration is refused in one line naming the account and the problem, never the token", async (t) => {
  const secret = "the-secret-token-value-123";
  const cases: [string, unknown, RegExp, string?][] = [
    [
      "a short token",
      { "ops-1": { token: "short", role: "admin" } },
      /account "ops-1" token must be at least 16 characters with no whitespace/,
      "short",
    ],
    ["a token with whitespace", {
      "ops-1": { token: `${secret} x`, role: "admin" },
    }, /account "ops-1" token must be at least 16/],
    [
      "a token with a character beyond ASCII",
      {
        "ops-1": { token: `${secret}\u00e9`, role: "admin" },
      },
      /^TRACE_UI_AUTH_ACCOUNTS: account "ops-1" token must be printable ASCII \(letters, digits, punctuation\); a bearer header carries no other characters$/,
    ],
    [
      "an unknown role",
      { "ops-1": { token: secret, role: "root" } },
      /account "ops-1" role must be one of viewer, analyst, operator, admin/,
    ],
    [
      "a missing role",
      { "ops-1": { token: secret } },
      /account "ops-1" role is required/,
    ],
    [
      "an unknown key",
      { "ops-1": { token: secret, role: "viewer", tenant: "x" } },
      /^TRACE_UI_AUTH_ACCOUNTS: account "ops-1" has a key that is not known; the allowed keys are token, role, application_id, user_id$/,
      "tenant",
    ],
    [
      "a secret pasted as a key",
      { "ops-1": { token: secret, role: "viewer", [`${secret}-key`]: 1 } },
      /account "ops-1" has a key that is not known/,
    ],
    ["a token that is not a string", {
      "ops-1": { token: 12345678901234567, role: "viewer" },
    }, /account "ops-1" token must be a string/],
    [
      "an account that is not an object",
      { "ops-1": secret },
      /account "ops-1" must be a JSON object/,
    ],
    [
      "a reserved name",
      { token: { token: secret, role: "viewer" } },
      /account "token" is a reserved operator name/,
    ],
    [
      "a bad name",
      { "has space": { token: secret, role: "viewer" } },
      /an operator name must be 1 to 64 letters/,
    ],
    [
      "a control character in a scope",
      { "ops-1": { token: secret, role: "viewer", application_id: "a\u0001" } },
      /account "ops-1" application_id must be 1 to 256 characters without control characters/,
    ],
    [
      "a bidirectional formatting character in a scope no event could carry",
      { "ops-1": { token: secret, role: "viewer", user_id: "u\u202e1" } },
      /^TRACE_UI_AUTH_ACCOUNTS: account "ops-1" user_id must not contain control, line separator or bidirectional formatting characters, which no event id carries$/,
    ],
    ["shared tokens", {
      "a-1": { token: secret, role: "viewer" },
      "b-1": { token: secret, role: "admin" },
    }, /account "b-1" has the same token as "a-1"/],
    ["not an object", [1, 2], /must be a JSON object of operator names/],
  ];
  for (const [name, config, message, shown] of cases) {
    await t.step(name, () => {
      let text = "";
      try {
        parseAccounts(JSON.stringify(config));
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        text = error.message;
      }
      assert.match(text, message);
      assert.doesNotMatch(text, /\n/, "one line");
      assert.ok(!text.includes(secret), `the token leaked: ${text}`);
      if (shown) assert.ok(!text.includes(shown), text);
    });
  }
});

Deno.test("account tokens must differ from TRACE_INGEST_TOKEN and TRACE_UI_AUTH_TOKEN; duplicate names and bad JSON are refused", () => {
  assert.throws(
    () =>
      parseAccounts(JSON.stringify({ a: { token: TOKEN_A, role: "viewer" } }), {
        ingestToken: TOKEN_A,
      }),
    /account "a" has the same token as TRACE_INGEST_TOKEN/,
  );
  assert.throws(
    () =>
      parseAccounts(JSON.stringify({ a: { token: TOKEN_A, role: "viewer" } }), {
        adminToken: TOKEN_A,
      }),
    /account "a" has the same token as TRACE_UI_AUTH_TOKEN/,
  );
  assert.throws(
    () =>
      parseAccounts(
        `{"a": {"token": "${TOKEN_A}", "role": "viewer"}, "a": {"token": "${TOKEN_B}", "role": "admin"}}`,
      ),
    (e: unknown) =>
      e instanceof ConfigError && /duplicate key "a"/.test(e.message) &&
      !e.message.includes(TOKEN_A) && !e.message.includes(TOKEN_B),
  );
  assert.throws(
    () => parseAccounts(`{"a": {"token": "${TOKEN_A}", "role": viewer}}`),
    (e: unknown) =>
      e instanceof ConfigError &&
      /TRACE_UI_AUTH_ACCOUNTS is not valid JSON/.test(e.message) &&
      !e.message.includes(TOKEN_A),
  );
});

Deno.test("the directory finds accounts by token and name, and the built-in administrators", async () => {
  const directory = createOperatorDirectory({
    adminToken: "admin-token-0123456789",
    oneTimeLogin: true,
    accounts: { a: { token: TOKEN_A, role: "analyst" } },
  });
  assert.equal((await directory.byToken(TOKEN_A))?.name, "a");
  assert.equal(
    (await directory.byToken("admin-token-0123456789"))?.name,
    "token",
  );
  assert.equal(await directory.byToken(TOKEN_A + "x"), null);
  assert.equal(await directory.byToken(""), null);
  assert.equal(directory.resolve("local")?.role, "admin");
  assert.equal(directory.resolve("nobody"), null);
  assert.equal(directory.accountCount(), 1);
  assert.equal(createOperatorDirectory({}).hasTokens(), false);
});

Deno.test("AccountBook.replace() validates the whole list first and keeps the old one on error", async () => {
  const book = new AccountBook({ a: { token: TOKEN_A, role: "viewer" } });
  const directory = createOperatorDirectory({
    accounts: book,
    ingestToken: TOKEN_B,
  });
  assert.throws(
    () => book.replace({ a: { token: TOKEN_B, role: "admin" } }),
    // Accounts passed in code: the host passed the token too, under no variable.
    /^ConfigError: Accounts: account "a" has the same token as the ingest token; give the account its own token$/,
  );
  assert.equal(directory.resolve("a")?.role, "viewer", "unchanged");
  book.replace({ a: { token: TOKEN_A, role: "analyst" } });
  assert.equal(directory.resolve("a")?.role, "analyst");
  book.replace({});
  assert.equal(directory.resolve("a"), null);
  assert.equal(await directory.byToken(TOKEN_A), null);
  assert.throws(
    () => checkAccounts(null),
    /^ConfigError: Accounts must be an object/,
  );
});

Deno.test("a session re-resolves its account on every request: downgrade, removal and token rotation take effect at once", async () => {
  await withHost({}, async ({ app, accounts }) => {
    const session = await signInAs(app, "analyst-1");
    const plan =
      "/traces/replay-plan.json?agent_id=support-bot&root_trace_id=root-1&application_id=app-1";
    assert.equal((await ask(app, "GET", plan, session)).status, 200);

    const downgraded = structuredClone(EXAMPLE) as Record<
      string,
      { role: string }
    >;
    downgraded["analyst-1"]!.role = "viewer";
    accounts.replace(downgraded);
    const refused = await ask(app, "GET", plan, session);
    assert.equal(refused.status, 403);
    assert.match(
      (await jsonOf(refused)).error.message,
      /needs the analyst role or above; this account is viewer/,
    );

    const rotated = structuredClone(EXAMPLE) as Record<
      string,
      { token: string }
    >;
    rotated["analyst-1"]!.token = "a-rotated-token-0123456789";
    accounts.replace(rotated);
    const afterRotation = await ask(
      app,
      "GET",
      "/traces/events/evt-search",
      session,
    );
    assert.equal(afterRotation.status, 303, "sessions of the old token end");

    accounts.replace(EXAMPLE);
    const again = await signInAs(app, "analyst-1");
    const { "analyst-1": _removed, ...rest } = EXAMPLE;
    accounts.replace(rest);
    const page = await ask(app, "GET", "/traces/events/evt-search", again);
    assert.equal(page.status, 303);
    assert.match(page.headers.get("location") ?? "", /^\/login\?next=/);
    assert.match(
      page.headers.get("set-cookie") ?? "",
      /Max-Age=0/,
      "the dead cookie is cleared",
    );
    const twin = await ask(app, "GET", "/traces/events/evt-search.json", again);
    assert.equal(twin.status, 401);
  });
});

const { EXAMPLE_ACCOUNTS: EXAMPLE } = await import("../fixtures/host/host.ts");

Deno.test("accounts passed in code are refused as accounts; TRACE_UI_AUTH_ACCOUNTS is named only when they came from it", () => {
  const bad = { "ops-1": { token: TOKEN_A, role: "root" } };
  const inCode = (fn: () => unknown) =>
    assert.throws(fn, (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.doesNotMatch(e.message, /TRACE_UI_AUTH_ACCOUNTS/);
      assert.match(
        e.message,
        /^Accounts: account "ops-1" role must be one of /,
      );
      return true;
    });
  inCode(() => new AccountBook(bad));
  inCode(() => new AccountBook().replace(bad));
  inCode(() => checkAccounts(bad));
  inCode(() => createOperatorDirectory({ accounts: bad }));
  inCode(() => parseAccounts(JSON.stringify(bad), { source: "value" }));
  assert.throws(
    () => new AccountBook([1]),
    /^ConfigError: Accounts must be an object of operator names to \{token, role\}$/,
  );
  assert.throws(
    () => parseAccounts("{", { source: "value" }),
    /^ConfigError: Accounts are not valid JSON \(/,
  );
  assert.throws(
    () => new AccountBook(bad, { source: "env" }),
    /^ConfigError: TRACE_UI_AUTH_ACCOUNTS: account "ops-1" role must be one of /,
  );
  assert.throws(
    () => parseAccounts(JSON.stringify(bad)),
    /^ConfigError: TRACE_UI_AUTH_ACCOUNTS: account "ops-1" role must be one of /,
  );
  const fromEnv = new AccountBook({}, { source: "env" });
  assert.throws(
    () => fromEnv.replace(bad),
    /^ConfigError: TRACE_UI_AUTH_ACCOUNTS: account "ops-1"/,
  );
});

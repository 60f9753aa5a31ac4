/** UI sessions: signed cookies, expiry, revocation, CSRF tokens, the one-time login and return paths. */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { parsePublicOrigin } from "../routes/_guard.ts";
import { safeNext } from "../routes/_login.tsx";
import { createSessionSigner } from "../routes/_session.ts";
import { createOneTimeLogin } from "../routes/one_time_login.ts";
import { createUiAuth, sessionCookie } from "../routes/_ui_auth.ts";
import type { UiEnv } from "../routes/ui/context.ts";

Deno.test("createSessionSigner() verifies its own cookies and names the operator", async () => {
  const signer = createSessionSigner();
  const { value, claims } = await signer.issue("local");
  assert.equal(claims.op, "local");
  assert.equal(claims.exp - claims.iat, signer.ttlSeconds);
  assert.deepEqual(await signer.verify(value), claims);
  assert.match(value, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
});

Deno.test("createSessionSigner() refuses edited, foreign and malformed cookies", async (t) => {
  const signer = createSessionSigner();
  const { value } = await signer.issue("local");
  const [body, signature] = value.split(".") as [string, string];
  const forged = btoa(JSON.stringify({
    v: 1,
    sid: "x",
    op: "admin",
    iat: 0,
    exp: 9_999_999_999,
  })).replace(/=+$/, "").replaceAll("+", "-").replaceAll("/", "_");
  const foreign = await createSessionSigner().issue("local");
  const cases: Record<string, string> = {
    "another body, same signature": `${forged}.${signature}`,
    // The first character: the last one carries two unused bits.
    "a changed signature character": `${body}.${
      (signature.startsWith("A") ? "B" : "A") + signature.slice(1)
    }`,
    "another process's key": foreign.value,
    "no signature": body,
    "three parts": `${value}.x`,
    "not base64url": `${body}.%%%`,
    "empty": "",
  };
  for (const [name, cookie] of Object.entries(cases)) {
    await t.step(name, async () => {
      assert.equal(await signer.verify(cookie), null);
    });
  }
});

Deno.test("createSessionSigner() lets a session expire and revokes it on sign-out", async () => {
  let now = Date.parse("2026-11-29T10:00:00Z");
  const signer = createSessionSigner({ ttlSeconds: 3600, now: () => now });
  const first = await signer.issue("local");
  const second = await signer.issue("local");
  now += 3599_000;
  assert.notEqual(await signer.verify(first.value), null);
  signer.revoke(first.claims);
  assert.equal(await signer.verify(first.value), null, "revoked");
  assert.notEqual(await signer.verify(second.value), null, "others stay");
  now += 1000;
  assert.equal(await signer.verify(second.value), null, "expired");
  assert.throws(() => createSessionSigner({ ttlSeconds: 10 }), RangeError);
});

Deno.test("createSessionSigner() ties CSRF tokens to one session", async () => {
  const signer = createSessionSigner();
  const a = await signer.issue("local");
  const b = await signer.issue("local");
  const token = await signer.csrfToken(a.claims.sid);
  assert.equal(await signer.checkCsrf(a.claims.sid, token), true);
  assert.equal(await signer.checkCsrf(b.claims.sid, token), false);
  assert.equal(await signer.checkCsrf(a.claims.sid, ""), false);
  assert.equal(await signer.checkCsrf(a.claims.sid, token + "x"), false);
  const other = createSessionSigner();
  assert.equal(
    await other.checkCsrf(a.claims.sid, token),
    false,
    "another key",
  );
});

Deno.test("createOneTimeLogin() accepts its token once", async () => {
  const login = createOneTimeLogin();
  const token = new URL(login.url("http://127.0.0.1:8788/")).searchParams.get(
    "token",
  )!;
  assert.ok(token.length >= 40, "256 random bits");
  assert.equal(
    login.url("http://127.0.0.1:8788/"),
    `http://127.0.0.1:8788${login.path}`,
  );
  assert.equal(await login.consume("wrong-token"), "wrong");
  assert.equal(login.used, false, "a wrong token spends nothing");
  const racing = await Promise.all([
    login.consume(token),
    login.consume(token),
  ]);
  assert.deepEqual(racing.sort(), ["accepted", "used"]);
  assert.equal(login.used, true);
  assert.equal(await login.consume(token), "used");
  assert.notEqual(createOneTimeLogin().path, login.path);
});

Deno.test("safeNext() keeps same-site paths only", () => {
  const cases: [string | undefined, string][] = [
    [undefined, "/"],
    ["/traces/health?x=1", "/traces/health?x=1"],
    ["https://evil.example/", "/"],
    ["//evil.example/", "/"],
    ["/\\evil.example", "/"],
    ["/ok\nLocation: x", "/"],
    ["traces/health", "/"],
    ["/login?token=abc", "/"],
    ["/login", "/"],
  ];
  for (const [given, expected] of cases) {
    assert.equal(safeNext(given), expected, String(given));
  }
});

Deno.test("sessionCookie() names and reads the request's session cookie once, then answers from the request's context", async () => {
  const auth = createUiAuth({
    uiAuthToken: "ui-admin-token-0123456789",
    publicOrigin: parsePublicOrigin("https://trace.example.com"),
  });
  const app = new Hono<UiEnv>();
  app.get("/", (c) => {
    const first = sessionCookie(c, auth);
    return c.json({
      first,
      again: sessionCookie(c, auth) === first,
      kept: c.get("sessionCookie") === first,
    });
  });
  const read = async (host: string, cookie?: string) =>
    await (await app.request("http://127.0.0.1:8080/", {
      headers: cookie === undefined ? { host } : { host, cookie },
    })).json();
  assert.deepEqual(
    await read("trace.example.com", "trace_session_443=abc"),
    {
      first: { name: "trace_session_443", value: "abc" },
      again: true,
      kept: true,
    },
  );
  // A browser on this machine reaches the listener: its port names the cookie.
  assert.deepEqual(
    await read("127.0.0.1:8080", "trace_session_443=abc"),
    { first: { name: "trace_session_8080" }, again: true, kept: true },
  );
});

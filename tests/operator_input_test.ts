/** Operator input: escaped emails in reasons, unknown and repeated fields, control characters in account tokens. */

import assert from "node:assert/strict";
import * as v from "valibot";
import {
  parseAccountRequest,
  parseAccounts,
  parseRevealRequest,
  Reason,
} from "../lib/auth/mod.ts";
import { ConfigError } from "../lib/errors.ts";
import type { ServerApp } from "../routes/server_app.ts";
import { auditRows, REVEAL, tokenOf, withHost } from "./operator_support.ts";

/** Sends `body` as it is, signed in with `operator`'s bearer token. */
function send(
  app: ServerApp,
  path: string,
  body: string,
  type: string,
): Promise<Response> {
  return Promise.resolve(app.request(`http://127.0.0.1:8788${path}`, {
    method: "POST",
    headers: {
      host: "127.0.0.1:8788",
      origin: "http://127.0.0.1:8788",
      authorization: `Bearer ${tokenOf("admin-1")}`,
      "content-type": type,
    },
    body,
  }));
}

Deno.test("a reason refuses an email spelled with percent escapes or HTML character references", async (t) => {
  for (
    const reason of [
      "customer jane.doe%40example.com asked",
      "customer jane.doe%2540example.com asked",
      "customer jane.doe%EF%BC%A0example.com asked",
      "customer jane.doe&#64;example.com asked",
      "customer jane.doe&#064;example.com asked",
      "customer jane.doe&#x40;example.com asked",
      "customer jane.doe&#X40;example.com asked",
      "customer jane.doe&#64example.com asked",
      "customer jane.doe&commat;example.com asked",
      "customer jane.doe&commatexample.com asked",
      "customer jane.doe&amp;#64;example.com asked",
      "customer jane.doe&#65312;example.com asked",
    ]
  ) {
    await t.step(reason, () => {
      assert.throws(
        () => parseRevealRequest({ ...REVEAL, reason }),
        (error: Error) =>
          error instanceof ConfigError &&
          /reason: must not contain an email address/.test(error.message) &&
          !error.message.includes("jane"),
      );
    });
  }
  await t.step("text that only looks escaped is kept", () => {
    for (
      const reason of [
        "SUP-12: 50% refund &amp; credit",
        "SUP-12 %zz &#xZZ; &#0; &#99999999;",
      ]
    ) {
      assert.equal(parseRevealRequest({ ...REVEAL, reason }).reason, reason);
    }
  });
});

Deno.test("a reason refuses an email spelled with a code escape or quoted-printable", async (t) => {
  for (
    const reason of [
      "SUP-1 alice\\u0040example.com",
      "SUP-1 alice\\U0040example.com",
      "SUP-1 alice\\u{40}example.com",
      "SUP-1 alice\\x40example.com",
      "SUP-1 alice\\\\u0040example.com",
      "SUP-1 alice\\uff20example.com",
      "SUP-1 alice=40example.com",
      "SUP-1 alice=3D40example.com",
      "SUP-1 alice=EF=BC=A0example.com",
      "SUP-1 alice%5Cx40example.com",
    ]
  ) {
    await t.step(reason, () => {
      assert.equal(v.safeParse(Reason, reason).success, false, reason);
      assert.throws(
        () => parseRevealRequest({ ...REVEAL, reason }),
        (error: Error) =>
          error instanceof ConfigError &&
          /reason: must not contain an email address/.test(error.message) &&
          !error.message.includes("alice"),
      );
    });
  }
  await t.step("text that only looks escaped is kept", () => {
    for (
      const reason of [
        "SUP-12 retry with limit=40",
        "SUP-12 set x =40 and y= 40",
        "SUP-12 path C:\\users\\x4 and \\u00 and \\u{110000}",
        "SUP-12 a=zz b=4",
      ]
    ) {
      assert.equal(parseRevealRequest({ ...REVEAL, reason }).reason, reason);
    }
  });
});

Deno.test("reveal and account bodies name an unknown field and the fields they take, never a key that may be a value", () => {
  assert.throws(
    () => parseRevealRequest({ ...REVEAL, force: true }),
    {
      message:
        'Invalid reveal request: "force" is not a known field; remove it (fields: agent_id, root_trace_id, event_id, turn_id, run_id, application_id, reason)',
    },
  );
  assert.throws(
    () => parseAccountRequest({ email: "ada@example.com", note: "x" }),
    {
      message:
        'Invalid account request: "note" is not a known field; remove it (fields: email)',
    },
  );
  for (const key of ["ada@example.com", "ada%40example", "two words"]) {
    assert.throws(
      () => parseAccountRequest({ email: "ada@example.com", [key]: 1 }),
      (error: Error) =>
        error.message ===
          "Invalid account request: a field is not a known field; remove it (fields: email)",
    );
  }
});

Deno.test("reveal and account resolution refuse a field given twice, in JSON or a form, without echoing it", async () => {
  await withHost({}, async ({ app, db }) => {
    const json =
      '{"agent_id":"support-bot","root_trace_id":"root-1","event_id":"evt-answer","turn_id":"turn-1","reason":"SUP-1234","reason":"ada@example.com"}';
    const twice = await send(app, "/traces/reveal", json, "application/json");
    assert.equal(twice.status, 400);
    const text = await twice.text();
    assert.match(
      text,
      /gives a field twice \(line 1, column \d+\); send each field once/,
    );
    assert.ok(!text.includes("ada@example.com"));

    const form = new URLSearchParams([
      ...Object.entries(REVEAL),
      ["reason", "SUP-5678"],
    ]).toString();
    const repeated = await send(
      app,
      "/traces/reveal",
      form,
      "application/x-www-form-urlencoded",
    );
    assert.equal(repeated.status, 400);
    assert.match(
      await repeated.text(),
      /The form gives \\?"reason\\?" more than once; send each field once/,
    );

    const email = await send(
      app,
      "/traces/account/resolve",
      '{"email":"ada@example.com","email":"zed@example.com"}',
      "application/json",
    );
    assert.equal(email.status, 400);
    const emailText = await email.text();
    assert.match(emailText, /gives a field twice/);
    assert.ok(!/ada@|zed@/.test(emailText), emailText);
    // Nothing ran: each refusal is recorded, without a value it carried.
    const rows = await auditRows(db);
    assert.deepEqual(
      rows.map((row) => [row.action, row.outcome]),
      [
        ["content.reveal", "refused"],
        ["content.reveal", "refused"],
        ["account.resolve", "refused"],
      ],
    );
    assert.ok(!/ada@|zed@|SUP-/.test(JSON.stringify(rows)));
  });
});

Deno.test("a reveal in another charset, or a form body that is not a form, is refused and recorded as refused", async () => {
  await withHost({}, async ({ app, db }) => {
    const form = new URLSearchParams(Object.entries(REVEAL)).toString();
    for (
      const type of [
        "application/x-www-form-urlencoded; charset=iso-8859-1",
        "application/json; charset=utf-16",
      ]
    ) {
      const body = type.startsWith("application/json")
        ? JSON.stringify(REVEAL)
        : form;
      const refused = await send(app, "/traces/reveal", body, type);
      assert.equal(refused.status, 415, type);
      assert.match(await refused.text(), /is not supported; send UTF-8/);
    }
    const malformed = await send(
      app,
      "/traces/reveal",
      "x",
      "multipart/form-data",
    );
    assert.equal(malformed.status, 400);
    assert.match(await malformed.text(), /the form body is malformed/);
    const details = (await auditRows(db)).map((row) =>
      JSON.parse(String(row.payload)).detail
    );
    assert.deepEqual(details, [
      "unsupported_media_type",
      "unsupported_media_type",
      "invalid_request",
    ]);
  });
});

Deno.test("an account token with a control character is refused when the accounts are loaded, without echoing it", async (t) => {
  for (const control of ["\u0000", "\u0007", "\u007f", "\u0085", "\ud800"]) {
    await t.step(JSON.stringify(control), () => {
      const token = `secret-token-abcdef${control}0123`;
      const text = JSON.stringify({ "ops-1": { token, role: "operator" } });
      assert.throws(
        () => parseAccounts(text),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message ===
            'TRACE_UI_AUTH_ACCOUNTS: account "ops-1" token must not contain control characters; use printable characters only' &&
          !error.message.includes("secret-token"),
      );
    });
  }
});

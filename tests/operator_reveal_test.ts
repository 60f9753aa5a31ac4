/** POST /traces/reveal: admin only, with a reason, one event at a time, shown once, audited, fail closed. */

import assert from "node:assert/strict";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import {
  ANSWER_PREVIEW,
  ask,
  auditRows,
  jsonOf,
  REVEAL,
  signInAs,
  withHost,
} from "./operator_support.ts";

Deno.test("an admin reveals one preview with a reason: shown once, never cached, and audited without the content", async () => {
  await withHost({}, async ({ app, db, logs }) => {
    const response = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: REVEAL,
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("cache-control"), "no-store");
    const body = await jsonOf(response);
    assert.equal(body.preview.content, ANSWER_PREVIEW);
    assert.equal(body.event.application_id, "app-1");
    const rows = await auditRows(db);
    assert.equal(rows.length, 1);
    const entry = JSON.parse(String(rows[0]!.payload));
    assert.equal(entry.operator, "admin-1");
    assert.equal(entry.role, "admin");
    assert.equal(entry.action, "content.reveal");
    assert.equal(entry.outcome, "succeeded");
    assert.equal(entry.reason, REVEAL.reason);
    assert.equal(entry.targets.agent_id, "support-bot");
    assert.equal(entry.targets.root_trace_id, "root-1");
    assert.equal(entry.targets.turn_id, "turn-1");
    assert.equal(entry.targets.application_id, "app-1");
    assert.match(entry.targets.event_id, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.match(entry.targets.user_id, /^hmac-sha256:/);
    assert.equal(body.audit.entry_id, entry.entry_id);
    const stored = JSON.stringify(rows);
    for (
      const secret of [
        ANSWER_PREVIEW,
        "evt-answer",
        "user-ada",
        "example-admin-token",
      ]
    ) {
      assert.ok(!stored.includes(secret), `the audit row holds ${secret}`);
    }
    assert.ok(
      !logs.join("\n").includes(ANSWER_PREVIEW),
      "the content was logged",
    );
  });
});

Deno.test("an event id that names more than one event answers 409 asking for a turn or run", async () => {
  await withHost({}, async ({ app, db }) => {
    const { turn_id: _turn, ...ambiguous } = REVEAL;
    const response = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: ambiguous,
    });
    assert.equal(response.status, 409);
    const { error } = await jsonOf(response);
    assert.match(
      error.message,
      /names more than one event in the root; give turn_id or run_id/,
    );
    const rows = await auditRows(db);
    const entry = JSON.parse(String(rows.at(-1)!.payload));
    assert.equal(entry.outcome, "failed");
    assert.equal(entry.detail, "conflict");
    // The other tenant's event, named by its turn.
    const other = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: { ...ambiguous, turn_id: "turn-9" },
    });
    assert.equal(
      (await jsonOf(other)).preview.content,
      "Use the link we sent to reset your password.",
    );
  });
});

Deno.test("a root's own event reveals in a root of many events, though its id is the root's", async () => {
  await withHost({}, async ({ app, db }) => {
    // A search by this id matches every event of the root (its root id):
    // the reveal names the one event with this event id all the same.
    const events = Array.from({ length: 150 }, (_, i) => ({
      application_id: "app-1",
      user_id: "user-ada",
      agent_id: REVEAL.agent_id,
      root_trace_id: "root-big",
      event_id: i === 0 ? "root-big" : `root-big-step-${i}`,
      parent_event_id: i === 0 ? null : "root-big",
      kind: i === 0 ? "turn" : "retrieval",
      started_at: new Date(Date.UTC(2026, 10, 1, 9, 0, i)).toISOString(),
      ...(i === 0 ? { preview: "The root's own question." } : {}),
    }));
    await ingestEvents(db, events);
    const response = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: {
        agent_id: REVEAL.agent_id,
        root_trace_id: "root-big",
        event_id: "root-big",
        reason: REVEAL.reason,
      },
    });
    assert.equal(response.status, 200);
    assert.equal(
      (await jsonOf(response)).preview.content,
      "The root's own question.",
    );
  });
});

Deno.test("viewers, analysts and operators are refused a reveal with 403, and the attempt is audited", async () => {
  await withHost({}, async ({ app, db }) => {
    for (
      const as of ["viewer-1", "analyst-1", "ops-1", "support-app1"] as const
    ) {
      const response = await ask(app, "POST", "/traces/reveal", {
        as,
        json: REVEAL,
      });
      assert.equal(response.status, 403, as);
      const text = await response.text();
      assert.match(text, /revealing content needs the admin role or above/);
      assert.ok(!text.includes(ANSWER_PREVIEW));
    }
    const rows = (await auditRows(db)).map((row) =>
      JSON.parse(String(row.payload))
    );
    assert.deepEqual(rows.map((r) => [r.operator, r.outcome, r.detail]), [
      ["viewer-1", "refused", "role"],
      ["analyst-1", "refused", "role"],
      ["ops-1", "refused", "role"],
      ["support-app1", "refused", "role"],
    ]);
  });
});

Deno.test("a reveal needs a reason that names no email, and reaches only the admin's scope", async () => {
  await withHost({}, async ({ app, accounts, db }) => {
    for (
      const [reason, pattern] of [
        [undefined, /reason: is required/],
        ["", /reason: is required|must say why/],
        ["ok", /must say why/],
        ["customer ada@example.com asked", /must not contain an email address/],
        [
          "customer ada＠example.com asked",
          /must not contain an email address/,
        ],
        [
          "customer ada﹫example.com asked",
          /must not contain an email address/,
        ],
        ["customer ada @ example.com", /must not contain an email address/],
        ["customer ada@examplecom", /must not contain an email address/],
        ["customer ada(at)example.com", /must not contain an email address/],
        ["customer ada [AT] example", /must not contain an email address/],
        ["csi \u009b31m red", /without control characters or direction/],
        ["spoof \u202eevil\u202c x", /without control characters or direction/],
        ["line\u2028break", /without control characters or direction/],
      ] as const
    ) {
      const { reason: _r, ...rest } = REVEAL;
      const response = await ask(app, "POST", "/traces/reveal", {
        as: "admin-1",
        json: reason === undefined ? rest : { ...rest, reason },
      });
      assert.equal(response.status, 400, String(reason));
      const text = await response.text();
      assert.match(text, pattern);
      assert.ok(!text.includes("ada"), "the reason was echoed");
    }
    // An admin bound to app-2 cannot reveal app-1's event, nor ask for app-1.
    accounts.replace({
      "admin-2": {
        token: "admin-two-token-0123456789",
        role: "admin",
        application_id: "app-2",
      },
    });
    const outside = await ask(app, "POST", "/traces/reveal", {
      token: "admin-two-token-0123456789",
      json: REVEAL,
    });
    assert.equal(outside.status, 404);
    const wider = await ask(app, "POST", "/traces/reveal", {
      token: "admin-two-token-0123456789",
      json: { ...REVEAL, application_id: "app-1" },
    });
    assert.equal(wider.status, 403);
    assert.match(await wider.text(), /outside this account's scope/);
    const last = JSON.parse(String((await auditRows(db)).at(-1)!.payload));
    assert.deepEqual([last.outcome, last.detail], ["refused", "forbidden"]);
  });
});

Deno.test("a session reveal needs the CSRF token; a form gets the content on a page that is not cached", async () => {
  await withHost({}, async ({ app }) => {
    const { cookie, csrf } = await signInAs(app, "admin-1");
    const forged = await ask(app, "POST", "/traces/reveal", {
      cookie,
      json: REVEAL,
    });
    assert.equal(forged.status, 403);
    assert.match(await forged.text(), /CSRF token is missing/);
    const page = await ask(app, "POST", "/traces/reveal", {
      cookie,
      form: { ...REVEAL, _csrf: csrf },
      headers: { accept: "text/html" },
    });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("cache-control"), "no-store");
    const html = await page.text();
    assert.match(html, /Revealed content/);
    assert.ok(html.includes(ANSWER_PREVIEW));
    assert.match(html, /Recorded in the audit trail as entry/);
  });
});

Deno.test("a session form that gives a field twice is refused, though its CSRF check read the form first", async () => {
  await withHost({}, async ({ app, db }) => {
    const { cookie, csrf } = await signInAs(app, "admin-1");
    const before = (await auditRows(db)).length;
    const twice = await ask(app, "POST", "/traces/reveal", {
      cookie,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        accept: "text/html",
      },
      body: new URLSearchParams([
        ...Object.entries({ ...REVEAL, _csrf: csrf }),
        ["reason", "SUP-5678"],
      ]).toString(),
    });
    assert.equal(twice.status, 400);
    assert.match(
      await twice.text(),
      /The form gives &quot;reason&quot; more than once; send each field once/,
    );
    // Nothing ran: the refusal is recorded, without the fields it carried.
    const entries = (await auditRows(db)).slice(before).map((row) =>
      JSON.parse(String(row.payload))
    );
    assert.deepEqual(
      entries.map((e) => [e.outcome, e.detail, e.reason, e.targets]),
      [["refused", "invalid_request", null, {}]],
    );
  });
});

Deno.test("a reveal fails closed when the audit trail cannot be written: 503 and no content", async () => {
  await withHost({}, async ({ app, db, logs }) => {
    // A trigger that refuses every insert stands in for a broken audit store.
    await db.client.execute(
      "CREATE TRIGGER audit_broken BEFORE INSERT ON auth_audit BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    const response = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: REVEAL,
    });
    assert.equal(response.status, 503);
    const text = await response.text();
    assert.equal(JSON.parse(text).error.code, "unavailable");
    assert.match(
      text,
      /audit trail could not be written, so the action was refused/,
    );
    assert.ok(!text.includes(ANSWER_PREVIEW));
    assert.match(
      logs.join("\n"),
      /audit: Cannot write the audit trail: .*disk full/,
    );
    assert.ok(!logs.join("\n").includes(ANSWER_PREVIEW));
  });
});

Deno.test("an event without a stored preview answers 404; GET is not a way in", async () => {
  await withHost({}, async ({ app }) => {
    const response = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: { ...REVEAL, event_id: "evt-search" },
    });
    assert.equal(response.status, 404);
    assert.match(await response.text(), /has no stored preview/);
    const get = await ask(app, "GET", "/traces/reveal?agent_id=support-bot", {
      as: "admin-1",
    });
    assert.equal(get.status, 405);
    await get.body?.cancel();
  });
});

Deno.test("bidi, zero-width and control characters of attributes and a revealed preview show as marked escapes, and the answer says how to hide it", async () => {
  await withHost({}, async ({ app, db }) => {
    await ingestEvents(db, [{
      application_id: "app-1",
      user_id: "user-ada",
      agent_id: "support-bot",
      root_trace_id: "root-uni",
      turn_id: "turn-u",
      event_id: "evt-uni",
      kind: "llm_call",
      attributes: {
        "app.bidi": "abc\u202Egnp.exe",
        "app.zw": "a\u200Bb\uFEFF",
        "app.ansi": '\u001b[31mRED "quoted" C:\\dir',
        "gen_ai.request.model": "gpt\u2066-x",
      },
      preview: "\u202Eevil \u001b[2J\nsecond line\tindented",
    }]);
    const raw =
      // deno-lint-ignore no-control-regex
      /[\u0000-\u0008\u000b-\u001f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
    const esc = (code: string) =>
      `<span class="esc" title="Character U+${code.toUpperCase()}, shown as its code">\\u{${code}}</span>`;
    const eventPath =
      "/traces/events/evt-uni?application_id=app-1&root_trace_id=root-uni&agent_id=support-bot";
    const inspectPath =
      "/traces/inspect?application_id=app-1&root_trace_id=root-uni&agent_id=support-bot&selected=evt-uni";
    for (const path of [eventPath, inspectPath]) {
      const html = await (await ask(app, "GET", path, { as: "admin-1" }))
        .text();
      assert.doesNotMatch(html, raw, path);
      assert.ok(html.includes(`&quot;abc${esc("202e")}gnp.exe&quot;`), path);
      assert.ok(html.includes(`&quot;a${esc("200b")}b${esc("feff")}&quot;`));
      assert.ok(html.includes(`gpt${esc("2066")}-x`), path);
      assert.ok(
        html.includes(
          `&quot;${esc("001b")}[31mRED \\&quot;quoted\\&quot; C:\\\\dir&quot;`,
        ),
        path,
      );
    }
    const { cookie, csrf } = await signInAs(app, "admin-1");
    const page = await ask(app, "POST", "/traces/reveal", {
      cookie,
      form: {
        agent_id: "support-bot",
        root_trace_id: "root-uni",
        event_id: "evt-uni",
        application_id: "app-1",
        reason: "SUP-42 spoofed file name",
        _csrf: csrf,
      },
      headers: { accept: "text/html" },
    });
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.doesNotMatch(html, raw);
    assert.ok(
      html.includes(
        `<code>${esc("202e")}evil ${
          esc("001b")
        }[2J\nsecond line\tindented</code>`,
      ),
      "the preview keeps its lines and tabs, and shows the rest as escapes",
    );
    // The hint hides the content without posting the reveal again.
    assert.doesNotMatch(html, /Reload/);
    assert.match(html, /To hide it, follow Back to the event/);
    const back =
      "/traces/events/evt-uni?application_id=app-1&amp;root_trace_id=root-uni&amp;agent_id=support-bot";
    assert.ok(html.includes(`data-hide-href="${back}"`));
    assert.ok(html.includes(`<a href="${back}">Back to the event</a>`));
  });
});

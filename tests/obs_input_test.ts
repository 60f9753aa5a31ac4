/**
 * Loose input the index refuses, each with a 400 naming the field: ids that
 * are not well-formed Unicode or hold control, separator or bidi characters,
 * duplicate keys, integers a double would round, impossible dates and times
 * outside 1970-2100, and the `__proto__` key. None of them may trip a
 * server alert.
 */

import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import {
  displayParts,
  terminalSafe,
  terminalSafeJson,
} from "../lib/display.ts";
import type { TraceDb } from "../lib/db.ts";
import {
  counterSnapshot,
  displaySafe,
  initializeObs,
  normalizeEvent,
  resetCounters,
} from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";

type App = ReturnType<typeof createApp>;

/** An event as JSON text, with `extra` spliced in raw (so escapes and duplicates survive). */
function eventText(extra = ""): string {
  return `{"event_id":"e-1","application_id":"app-1","agent_id":"agent-1",` +
    `"kind":"retrieval","started_at":"2026-09-01T00:00:00Z"${
      extra ? `,${extra}` : ""
    }}`;
}

async function withApp(fn: (app: App, db: TraceDb) => Promise<void>) {
  await withDb(async (db) => {
    await initializeObs(db);
    await fn(createApp({ db, log: () => {} }), db);
  });
}

function post(app: App, body: string, type = "application/json") {
  return app.request("/api/events", {
    method: "POST",
    body,
    headers: { "content-type": type },
  });
}

async function refusal(
  response: Response,
): Promise<{ status: number; message: string; field: string | undefined }> {
  const body = await response.json();
  return {
    status: response.status,
    message: body.error.message,
    field: body.error.items?.[0]?.field,
  };
}

async function storedEvents(db: TraceDb): Promise<number> {
  const result = await db.client.execute(
    "SELECT COUNT(*) AS n FROM obs_events",
  );
  return Number(result.rows[0]!.n);
}

Deno.test("an id with a lone surrogate is a 400 naming the field, every time, and no alert", async () => {
  await withApp(async (app, db) => {
    resetCounters();
    const body = `[${eventText().replace('"e-1"', '"s-\\ud800"')}]`;
    for (const attempt of ["first", "retry"]) {
      const answer = await refusal(await post(app, body));
      assert.equal(answer.status, 400, attempt);
      assert.equal(answer.field, "event_id", attempt);
      assert.match(answer.message, /well-formed Unicode/);
    }
    // Another id that storage would have mapped to the same U+FFFD.
    const other = body.replace("\\ud800", "\\udfff");
    assert.equal((await post(app, other)).status, 400);
    assert.equal(await storedEvents(db), 0);
    assert.equal(counterSnapshot().counts.write_failures, 0);
    const health = await (await app.request("/api/health")).json();
    assert.notEqual(health.status, "failing");
    assert.ok(
      !health.alerts.some((a: { code: string }) => a.code === "write_failures"),
    );
  });
});

Deno.test("ids refuse control, line separator and bidi characters", async (t) => {
  const characters = {
    "C0 control": "\\u0007",
    "escape": "\\u001b",
    "DEL": "\\u007f",
    "C1 control": "\\u0085",
    "line separator": "\\u2028",
    "paragraph separator": "\\u2029",
    "right-to-left override": "\\u202e",
    "right-to-left isolate": "\\u2067",
    "right-to-left mark": "\\u200f",
  };
  await withApp(async (app, db) => {
    for (const [name, char] of Object.entries(characters)) {
      await t.step(name, async () => {
        for (const field of ["event_id", "thread_id", "user_id"]) {
          const extra = field === "event_id" ? "" : `"${field}":"a${char}b"`;
          let text = eventText(extra);
          if (field === "event_id") {
            text = text.replace('"e-1"', `"a${char}b"`);
          }
          const answer = await refusal(await post(app, text));
          assert.equal(answer.status, 400, field);
          assert.equal(answer.field, field);
          assert.match(answer.message, /control, line separator or bidi/);
        }
      });
    }
    assert.equal(await storedEvents(db), 0);
  });
});

Deno.test("ingest bodies refuse duplicate keys, with a line and column", async () => {
  await withApp(async (app, db) => {
    const json = await refusal(
      await post(app, eventText('"kind":"llm_call"')),
    );
    assert.equal(json.status, 400);
    assert.match(
      json.message,
      /not valid JSON \(line 1, column \d+: duplicate key "kind"\)/,
    );
    const ndjson = await post(
      app,
      `${eventText().replace("e-1", "e-2")}\n${eventText('"kind":"x"')}\n`,
      "application/x-ndjson",
    );
    assert.equal(ndjson.status, 400);
    const item = (await ndjson.json()).error.items[0];
    assert.equal(item.line, 2);
    assert.match(item.message, /duplicate key "kind"/);
    assert.equal(await storedEvents(db), 0);
  });
});

Deno.test("whole numbers past 2^53 and 1e300 are refused, not rounded", async () => {
  const selection = (rank: string) =>
    `"selection":{"candidates":[{"ref":{"type":"doc","id":"d"},"rank":${rank},"selected":true,"reason":"mmr_rank"}]}`;
  await withApp(async (app, db) => {
    const big = await refusal(
      await post(app, eventText(selection("9007199254740993"))),
    );
    assert.equal(big.status, 400);
    assert.match(big.message, /would lose precision/);
    const attribute = await refusal(
      await post(
        app,
        eventText('"attributes":{"app.count":123456789012345678901}'),
      ),
    );
    assert.equal(attribute.status, 400);
    const huge = await refusal(await post(app, eventText(selection("1e300"))));
    assert.equal(huge.status, 400);
    assert.equal(huge.field, "selection.candidates.0.rank");
    assert.match(huge.message, /whole number below 2\^53/);
    assert.equal(await storedEvents(db), 0);
    // Within range both are fine.
    assert.equal(
      (await post(app, eventText(selection("9007199254740991")))).status,
      200,
    );
  });
});

Deno.test("event times must be real dates between 1970 and 2100", async (t) => {
  const refused = [
    "2026-02-30T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2027-02-29T00:00:00Z",
    "2100-02-29T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T23:60:00Z",
    "2026-01-01T23:59:60Z",
    "2026-01-01T00:00:00+24:00",
    "2026-01-01T00:00:00+15:00",
    "2026-01-01T00:00:00-14:01",
    "2026-01-01T00:00:00+05:60",
    "0000-01-01T00:00:00Z",
    "9999-12-31T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "1970-01-01T00:30:00+01:00",
    "2101-01-01T00:00:00Z",
  ];
  const accepted = [
    "2028-02-29T12:00:00Z",
    "2000-02-29T00:00:00Z",
    "1970-01-01T00:00:00Z",
    "2100-12-31T23:59:59.999Z",
    "2026-06-30T23:59:59-05:00",
    "2026-06-30T23:59:59+14:00",
    "2026-06-30T23:59:59-14:00",
  ];
  for (const time of refused) {
    await t.step(`refuses ${time}`, () => {
      const base = normalizeEvent(JSON.parse(eventText()), 0);
      assert.ok("fingerprint" in base, "the event is valid but for its time");
      const result = normalizeEvent(
        { ...JSON.parse(eventText()), started_at: time },
        0,
      );
      assert.ok(!("fingerprint" in result), time);
      assert.equal(result.field, "started_at");
    });
  }
  for (const time of accepted) {
    await t.step(`accepts ${time}`, () => {
      const result = normalizeEvent(
        { ...JSON.parse(eventText()), started_at: time, ended_at: null },
        0,
      );
      assert.ok("fingerprint" in result, JSON.stringify(result));
      assert.equal(result.meta.started_at, Date.parse(time));
    });
  }
});

Deno.test("a __proto__ key is refused with a per-item error, never dropped", async () => {
  await withApp(async (app, db) => {
    const attribute = await refusal(
      await post(
        app,
        `[${eventText('"attributes":{"__proto__":"x","app.k":"v"}')}]`,
      ),
    );
    assert.equal(attribute.status, 400);
    assert.equal(attribute.field, "attributes");
    assert.match(attribute.message, /"__proto__"/);
    const top = await refusal(
      await post(app, `[${eventText('"__proto__":{"kind":"x"}')}]`),
    );
    assert.equal(top.status, 400);
    assert.match(top.message, /"__proto__"/);
    assert.equal(await storedEvents(db), 0);
  });
});

Deno.test("displaySafe() escapes what could disturb a terminal, and nothing else", () => {
  assert.equal(
    displaySafe("run\u001b[2J\u202eevil\u2028x\\y\ud800z"),
    "run\\u{001b}[2J\\u{202e}evil\\u{2028}x\\\\y\\u{d800}z",
  );
  assert.equal(displaySafe("trace-doc-ünï 😀 日本"), "trace-doc-ünï 😀 日本");
});

Deno.test("the terminal escapes zero-width and invisible characters as a page shows them", () => {
  const hidden = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u200f",
    "\u2060",
    "\u2061",
    "\u2062",
    "\u2063",
    "\u2064",
    "\ufeff",
  ];
  for (const char of hidden) {
    const code = char.charCodeAt(0).toString(16);
    const page = displayParts(`a${char}b`).map((part) => part.text).join("");
    assert.equal(page, `a\\u{${code}}b`, code);
    assert.equal(displaySafe(`a${char}b`), page, code);
    assert.equal(terminalSafe(`C:\\x ${char}`), `C:\\x \\u{${code}}`, code);
    const json = terminalSafeJson(JSON.stringify({ id: `a${char}b` }));
    assert.ok(!json.includes(char), code);
    assert.deepEqual(JSON.parse(json), { id: `a${char}b` });
  }
});

Deno.test("the terminal, the page and JSON views escape every other format character, past U+FFFF too", () => {
  // A soft hyphen, an Arabic number sign, a Mongolian vowel separator,
  // interlinear annotation, and a tag character (invisible ASCII).
  for (const char of ["\u00ad", "\u0600", "\u180e", "\ufff9", "\u{e0041}"]) {
    const code = char.codePointAt(0)!.toString(16).padStart(4, "0");
    const page = displayParts(`a${char}b`).map((part) => part.text).join("");
    assert.equal(page, `a\\u{${code}}b`, code);
    assert.equal(displaySafe(`a${char}b`), page, code);
    assert.equal(terminalSafe(`a${char}b`), page, code);
    const json = terminalSafeJson(JSON.stringify({ id: `a${char}b` }));
    assert.ok(!json.includes(char), code);
    assert.deepEqual(JSON.parse(json), { id: `a${char}b` });
  }
  assert.equal(terminalSafeJson('"\u{e0041}"'), '"\\udb40\\udc41"');
});

Deno.test("terminalSafeJson() escapes what JSON leaves raw and a terminal acts on, keeping the same JSON", () => {
  const value = { path: "/d/a\u001bb\u202ec\u009bd\u2028e ü 😀" };
  const safe = terminalSafeJson(JSON.stringify(value, null, 2));
  for (const raw of ["\u001b", "\u202e", "\u009b", "\u2028"]) {
    assert.ok(!safe.includes(raw), JSON.stringify(raw));
  }
  assert.match(safe, /\\u202e/);
  assert.deepEqual(JSON.parse(safe), value);
});

Deno.test("an event's unknown key or attribute key that may be a value is never repeated in its issue", () => {
  const base = {
    event_id: "e1",
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
  };
  assert.deepEqual(normalizeEvent({ ...base, "password=hunter2 x": 1 }, 0), {
    index: 0,
    field: "(root)",
    message: "a key that is not a field name; remove it",
  });
  assert.deepEqual(normalizeEvent({ ...base, extra: 1 }, 0), {
    index: 0,
    field: "extra",
    message: "unknown key; remove it",
  });
  const attribute = normalizeEvent({
    ...base,
    attributes: { "jane@example.com secret": "x" },
  }, 0);
  assert.ok("field" in attribute);
  assert.equal(attribute.field, "attributes.(a key that is not a name)");
});

Deno.test("attributes that are not an object and out-of-range counts are refused in the schema's own words", () => {
  const base = {
    event_id: "e1",
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
  };
  const candidate = (extra: Record<string, unknown>) => ({
    selection: {
      candidates: [{
        ref: { type: "doc", id: "d" },
        selected: true,
        reason: "mmr_rank",
        ...extra,
      }],
    },
  });
  const cases: [Record<string, unknown>, string, string][] = [
    [
      { attributes: ["a"] },
      "attributes",
      "must be an object of attribute key → value",
    ],
    [
      { attributes: "app.a=1" },
      "attributes",
      "must be an object of attribute key → value",
    ],
    [
      candidate({ rank: -1 }),
      "selection.candidates.0.rank",
      "must be a whole number of 0 or more",
    ],
    [
      candidate({ rank: "1" }),
      "selection.candidates.0.rank",
      "must be a whole number of 0 or more",
    ],
    [
      candidate({ rank: 1.5 }),
      "selection.candidates.0.rank",
      "must be a whole number of 0 or more",
    ],
    [
      candidate({ score: "0.5" }),
      "selection.candidates.0.score",
      "must be a number or null",
    ],
    [
      {
        ...candidate({}),
        selection: { ...candidate({}).selection, omitted_candidates: -1 },
      },
      "selection.omitted_candidates",
      "must be a whole number of 0 or more",
    ],
  ];
  for (const [extra, field, message] of cases) {
    assert.deepEqual(
      normalizeEvent({ ...base, ...extra }, 0),
      { index: 0, field, message },
      JSON.stringify(extra),
    );
  }
});

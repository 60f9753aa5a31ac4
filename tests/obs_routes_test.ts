import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { MAX_BATCH_EVENTS } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import { gzipSync } from "node:zlib";
import { concatBytes } from "../lib/bytes.ts";

function event(i: number, extra: Record<string, unknown> = {}) {
  return {
    event_id: `e${i}`,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: new Date(Date.UTC(2026, 8, 1, 0, 0, i)).toISOString(),
    ...extra,
  };
}

type App = ReturnType<typeof createApp>;

async function api(
  fn: (app: App, db: TraceDb, logged: string[]) => Promise<void>,
) {
  await withDb(async (db) => {
    await initializeObs(db);
    const logged: string[] = [];
    const app = createApp({
      db,
      bodyLimits: { maxBytes: 64 * 1024, maxDecodedBytes: 64 * 1024 },
      log: (line) => logged.push(line),
    });
    await fn(app, db, logged);
  });
}

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request("http://localhost/api/events", {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });

Deno.test("POST /api/events ingests a JSON array, a single object and NDJSON", async () => {
  await api(async (app) => {
    const array = await app.request(post(JSON.stringify([event(1), event(2)])));
    assert.equal(array.status, 200);
    assert.equal((await array.json()).inserted, 2);
    const single = await app.request(post(JSON.stringify(event(3))));
    assert.equal((await single.json()).inserted, 1);
    const ndjson = await app.request(
      post(`${JSON.stringify(event(4))}\n\n${JSON.stringify(event(1))}\n`, {
        "content-type": "application/x-ndjson",
      }),
    );
    const body = await ndjson.json();
    assert.deepEqual([body.inserted, body.duplicates], [1, 1]);
    // NDJSON sent as JSON is refused, saying which Content-Type reads it.
    const mislabelled = await app.request(
      post(`${JSON.stringify(event(5))}\n${JSON.stringify(event(6))}\n`),
    );
    assert.equal(mislabelled.status, 400);
    assert.match(
      (await mislabelled.json()).error.message,
      /line 2, column 1: unexpected data after the value\); for one event per line, send Content-Type: application\/x-ndjson$/,
    );
  });
});

Deno.test("POST /api/events answers every kind of empty batch with 200 and nothing written", async () => {
  await api(async (app) => {
    for (
      const [body, type] of [
        ["[]", "application/json"],
        ["", "application/json"],
        ["\n\n", "application/x-ndjson"],
      ]
    ) {
      const res = await app.request(post(body!, { "content-type": type! }));
      assert.equal(res.status, 200, `${type} ${JSON.stringify(body)}`);
      assert.deepEqual(await res.json(), {
        accepted: 0,
        inserted: 0,
        duplicates: 0,
        items: [],
      });
    }
  });
});

Deno.test("POST /api/events accepts gzip bodies", async () => {
  await api(async (app) => {
    const gz = new Response(
      new Blob([JSON.stringify([event(1)])]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    );
    const res = await app.request(
      post(await gz.arrayBuffer(), { "content-encoding": "gzip" }),
    );
    assert.equal(res.status, 200);
    assert.equal((await res.json()).inserted, 1);
    // Small on the wire, over the limit once inflated.
    const bomb = new Response(
      new Blob([" ".repeat(200_000)]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    );
    const inflated = await app.request(
      post(await bomb.arrayBuffer(), { "content-encoding": "gzip" }),
    );
    assert.equal(inflated.status, 413);
    assert.equal((await inflated.json()).error.code, "payload_too_large");
  });
});

Deno.test("POST /api/events reads every member of a gzip body and refuses a cut or padded one", async () => {
  await api(async (app) => {
    const gzip = (text: string) => gzipSync(new TextEncoder().encode(text));
    const json = JSON.stringify([event(1), event(2)]);
    const half = Math.floor(json.length / 2);
    const members = concatBytes([
      gzip(json.slice(0, half)),
      gzip(json.slice(half)),
    ]);
    const both = await app.request(
      post(new Uint8Array(members), { "content-encoding": "gzip" }),
    );
    assert.equal(both.status, 200);
    assert.equal((await both.json()).inserted, 2);
    const one = gzip(JSON.stringify([event(3)]));
    for (
      const [name, body] of [
        ["cut", one.slice(0, one.length - 6)],
        ["padded", concatBytes([one, new Uint8Array([1, 2, 3])])],
      ] as const
    ) {
      const res = await app.request(
        post(new Uint8Array(body), { "content-encoding": "gzip" }),
      );
      assert.equal(res.status, 400, name);
      assert.match(
        (await res.json()).error.message,
        /the gzip body is corrupt/,
        name,
      );
    }
  });
});

Deno.test("POST /api/events rejects a malformed batch whole with per-item errors", async () => {
  await api(async (app) => {
    const res = await app.request(
      post(JSON.stringify([event(1), { ...event(2), kind: "Bad Kind" }])),
    );
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.code, "invalid_request");
    assert.deepEqual(
      body.error.items.map((
        i: { index: number; field: string },
      ) => [i.index, i.field]),
      [[1, "kind"]],
    );
    const bad = await app.request(
      post(`${JSON.stringify(event(1))}\n{oops\n[1]\n`, {
        "content-type": "application/x-ndjson",
      }),
    );
    assert.equal(bad.status, 400);
    const refused = (await bad.json()).error;
    assert.deepEqual(
      refused.items.map((i: { line: number; message: string }) => [
        i.line,
        i.message,
      ]),
      [
        [2, "is not valid JSON (column 2: expected a string key)"],
        [
          3,
          "must be a JSON object; NDJSON holds one event object per line, not an array",
        ],
      ],
    );
    assert.ok(!refused.message.includes("oops"), "the body is not echoed");
    const invalidJson = await app.request(post('{"secret-text'));
    assert.equal(invalidJson.status, 400);
    assert.ok(!(await invalidJson.text()).includes("secret-text"));
    const page = await (await app.request("/api/events")).json();
    assert.equal(page.events.length, 0, "nothing was written");
  });
});

Deno.test("POST /api/events says a missing required field is required", async () => {
  await api(async (app) => {
    const res = await app.request(post(JSON.stringify({ event_id: "e-5" })));
    assert.equal(res.status, 400);
    const { error } = await res.json();
    assert.deepEqual(
      error.items.map((i: { field: string; message: string }) => [
        i.field,
        i.message,
      ]),
      [["application_id", "is required"]],
    );
    const ref = await app.request(
      post(JSON.stringify(event(1, { resources: [{ id: "doc-1" }] }))),
    );
    assert.equal(
      (await ref.json()).error.items[0].message,
      "is required",
      "nested objects name a missing key the same way",
    );
  });
});

Deno.test("POST /api/events answers 409 for a changed payload, 413 and 415 for bad bodies", async () => {
  await api(async (app) => {
    await app.request(post(JSON.stringify([event(1)])));
    const conflict = await app.request(
      post(JSON.stringify([event(1, { status: "error" })])),
    );
    assert.equal(conflict.status, 409);
    assert.match((await conflict.json()).error.message, /already stored/);
    const repeated = await app.request(
      post(JSON.stringify([event(5), event(5, { status: "error" })])),
    );
    assert.equal(repeated.status, 409);
    assert.match(
      (await repeated.json()).error.message,
      /repeated in this batch with a different payload \(items 0 and 1\)/,
    );
    const large = await app.request(
      post(JSON.stringify([event(2, { preview: "x".repeat(70_000) })])),
    );
    assert.equal(large.status, 413);
    const type = await app.request(post("x", { "content-type": "text/plain" }));
    assert.equal(type.status, 415);
    assert.equal((await type.json()).error.code, "unsupported_media_type");
    const encoding = await app.request(post("x", { "content-encoding": "br" }));
    assert.equal(encoding.status, 415);
    // A body in another charset would be misread as UTF-8, not converted.
    const utf16 = await app.request(
      post("[]", { "content-type": "application/json; charset=utf-16" }),
    );
    assert.equal(utf16.status, 415);
    assert.match(
      (await utf16.json()).error.message,
      /charset "utf-16" is not supported; send UTF-8/,
    );
    for (const declared of ["utf-8", '"UTF-8"', "utf8"]) {
      const utf8 = await app.request(
        post("[]", { "content-type": `application/json; charset=${declared}` }),
      );
      assert.equal(utf8.status, 200, declared);
    }
    const notGzip = await app.request(
      post("plain", { "content-encoding": "gzip" }),
    );
    assert.equal(notGzip.status, 400);
  });
});

Deno.test("POST /api/events answers 413 for more events than one batch may carry", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db, log: () => {} });
    const tooMany = "[" + Array(MAX_BATCH_EVENTS + 1).fill("{}").join(",") +
      "]";
    const res = await app.request(post(tooMany));
    assert.equal(res.status, 413);
    assert.match(
      (await res.json()).error.message,
      new RegExp(`more than ${MAX_BATCH_EVENTS} events; send smaller batches`),
    );
  });
});

Deno.test("/api/events answers 405 with Allow for other methods", async () => {
  await api(async (app) => {
    const put = await app.request("/api/events", { method: "PUT" });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get("allow"), "GET, POST");
    assert.equal((await put.json()).error.code, "method_not_allowed");
    const summary = await app.request("/api/events/summary", {
      method: "POST",
    });
    assert.equal(summary.status, 405);
    assert.equal(summary.headers.get("allow"), "GET");
  });
});

Deno.test("GET /api/events queries with filters and cursors", async () => {
  await api(async (app) => {
    await app.request(
      post(JSON.stringify([event(1), event(2, { user_id: "u1" }), event(3)])),
    );
    const page =
      await (await app.request("/api/events?agent_id=agent-1&limit=2")).json();
    assert.deepEqual(page.events.map((e: { event_id: string }) => e.event_id), [
      "e3",
      "e2",
    ]);
    assert.equal(page.has_more, true);
    assert.equal(page.read_completeness, "partial");
    assert.equal(page.instrumentation_coverage, "unknown");
    assert.equal(page.outcome_verification, "unknown");
    const next = await (await app.request(
      `/api/events?agent_id=agent-1&limit=2&cursor=${page.next_cursor}`,
    )).json();
    assert.deepEqual(next.events.map((e: { event_id: string }) => e.event_id), [
      "e1",
    ]);
    const refused = await app.request(
      `/api/events?agent_id=agent-2&cursor=${page.next_cursor}`,
    );
    assert.equal(refused.status, 400);
    const problem = (await refused.json()).error;
    assert.equal(problem.code, "refused");
    assert.match(problem.message, /different filters/);
    const anonymous = await (await app.request("/api/events?anonymous=true"))
      .json();
    assert.equal(anonymous.events.length, 2);
    assert.equal((await app.request("/api/events?limit=5000")).status, 400);
  });
});

Deno.test("GET /api/events and its summary are never stored by a browser or proxy", async () => {
  await api(async (app) => {
    await app.request(post(JSON.stringify([event(1, { user_id: "u-42" })])));
    // Ids of a subject an erasure removes must not outlive it in a cache.
    for (const path of ["/api/events?user_id=u-42", "/api/events/summary"]) {
      const res = await app.request(path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("cache-control"), "no-store", path);
      await res.body?.cancel();
    }
  });
});

Deno.test("GET /api/events suggests the parameter a CLI flag name meant", async () => {
  await api(async (app) => {
    const res = await app.request("/api/events?application=app-1");
    assert.equal(res.status, 400);
    assert.match(
      (await res.json()).error.message,
      /unknown parameter "application"; did you mean application_id\?$/,
    );
    const since = await (await app.request("/api/events?since=x")).json();
    assert.match(since.error.message, /did you mean start_time\?$/);
    const other = await (await app.request("/api/events?colour=red")).json();
    assert.match(other.error.message, /unknown parameter "colour"; remove it$/);
  });
});

Deno.test("GET /api/events refuses a resource_type without a resource", async () => {
  await api(async (app) => {
    const res = await app.request("/api/events?resource_type=doc");
    assert.equal(res.status, 400);
    assert.match(
      (await res.json()).error.message,
      /resource_type needs resource/,
    );
  });
});

Deno.test("GET /api/events/summary aggregates the selection and refuses paging parameters", async () => {
  await api(async (app) => {
    await app.request(
      post(JSON.stringify([event(1), event(2, { status: "error" })])),
    );
    const res = await app.request("/api/events/summary?application_id=app-1");
    assert.equal(res.status, 200);
    const summary = await res.json();
    assert.equal(summary.events, 2);
    assert.equal(summary.errors, 1);
    for (const param of ["limit=5", "cursor=abc"]) {
      const refused = await app.request(`/api/events/summary?${param}`);
      assert.equal(refused.status, 400, param);
      assert.match(
        (await refused.json()).error.message,
        /pages a query and does not apply here/,
      );
    }
  });
});

Deno.test("storage failures answer 503 with a generic message and log the detail once", async () => {
  await api(async (app, db, logged) => {
    await db.client.execute("DROP TABLE obs_state");
    const res = await app.request(post(JSON.stringify([event(1)])));
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      error: {
        code: "storage",
        message: "The trace index is unavailable; check the server log",
      },
    });
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /^POST \/api\/events: StorageError: .*obs_state/);
  });
});

Deno.test("a missing index answers 503 without the server's file path", async () => {
  await withDb(async (db) => {
    const logged: string[] = [];
    const app = createApp({ db, log: (line) => logged.push(line) });
    const res = await app.request("/api/events?application_id=a");
    assert.equal(res.status, 503);
    const text = await res.text();
    assert.ok(!text.includes(db.path!), "no server path in the answer");
    assert.equal(
      JSON.parse(text).error.message,
      "The trace index is not initialized; run trace obs init on the server",
    );
    assert.equal(logged.length, 1);
    assert.ok(logged[0]!.includes(db.path!), "the log names the file");
  });
});

Deno.test("GET /api/health reports the index and this server's counters", async () => {
  await api(async (app) => {
    await app.request(post(JSON.stringify([event(1)])));
    const res = await app.request("/api/health");
    assert.equal(res.status, 200);
    const health = await res.json();
    assert.equal(health.schema.provisioned, true);
    assert.equal(health.counters.state, "recorded");
    assert.equal(health.counters.scope, "this_process");
    assert.ok(health.counters.values.events_written >= 1);
    assert.equal(
      (await app.request("/api/health", { method: "POST" })).status,
      405,
    );
  });
});

Deno.test("GET /api/health needs the bearer token when one is set", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const token = "a-long-ingest-token-123";
    const app = createApp({ db, ingestToken: token, log: () => {} });
    const missing = await app.request("/api/health");
    assert.equal(missing.status, 401);
    assert.equal((await missing.json()).error.code, "unauthorized");
    const ok = await app.request("/api/health", {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(ok.status, 200);
  });
});

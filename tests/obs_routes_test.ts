import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { initializeObs } from "../lib/obs/schema.ts";
import { createEventsApi } from "../routes/events.ts";

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

async function api(
  fn: (app: ReturnType<typeof createEventsApi>, db: TraceDb) => Promise<void>,
) {
  await withDb(async (db) => {
    await initializeObs(db);
    await fn(createEventsApi({ db, maxBodyBytes: 64 * 1024 }), db);
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
  });
});

Deno.test("POST /api/events rejects a malformed batch whole with per-item errors", async () => {
  await api(async (app) => {
    const res = await app.request(
      post(JSON.stringify([event(1), { ...event(2), kind: "Bad Kind" }])),
    );
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.code, "config_invalid");
    assert.deepEqual(
      body.error.items.map((
        i: { index: number; field: string },
      ) => [i.index, i.field]),
      [[1, "kind"]],
    );
    const bad = await app.request(
      post(`${JSON.stringify(event(1))}\n{oops\n`, {
        "content-type": "application/x-ndjson",
      }),
    );
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.items[0].message, /line 2/);
    const page = await (await app.request("/api/events")).json();
    assert.equal(page.events.length, 0, "nothing was written");
  });
});

Deno.test("POST /api/events answers 409 for a changed payload, 413 and 415 for bad bodies", async () => {
  await api(async (app) => {
    await app.request(post(JSON.stringify([event(1)])));
    const conflict = await app.request(
      post(JSON.stringify([event(1, { status: "error" })])),
    );
    assert.equal(conflict.status, 409);
    const large = await app.request(
      post(JSON.stringify([event(2, { preview: "x".repeat(70_000) })])),
    );
    assert.equal(large.status, 413);
    const type = await app.request(post("x", { "content-type": "text/plain" }));
    assert.equal(type.status, 415);
    const encoding = await app.request(post("x", { "content-encoding": "br" }));
    assert.equal(encoding.status, 415);
    const notGzip = await app.request(
      post("plain", { "content-encoding": "gzip" }),
    );
    assert.equal(notGzip.status, 400);
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
    assert.match((await refused.json()).error.message, /different filters/);
    const anonymous = await (await app.request("/api/events?anonymous=true"))
      .json();
    assert.equal(anonymous.events.length, 2);
    assert.equal((await app.request("/api/events?limit=5000")).status, 400);
  });
});

Deno.test("GET /api/events/summary aggregates the selection", async () => {
  await api(async (app) => {
    await app.request(
      post(JSON.stringify([event(1), event(2, { status: "error" })])),
    );
    const res = await app.request("/api/events/summary?application_id=app-1");
    assert.equal(res.status, 200);
    const summary = await res.json();
    assert.equal(summary.events, 2);
    assert.equal(summary.errors, 1);
  });
});

Deno.test("createEventsApi() answers 401 when authorize refuses", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createEventsApi({
      db,
      authorize: (c) =>
        c.req.header("authorization") === "Bearer good-token-123456",
    });
    assert.equal((await app.request("/api/events")).status, 401);
    assert.equal((await app.request(post("[]"))).status, 401);
    const ok = await app.request("/api/events/summary", {
      headers: { authorization: "Bearer good-token-123456" },
    });
    assert.equal(ok.status, 200);
  });
});

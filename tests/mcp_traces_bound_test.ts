/** trace.query_traces never drops an event to fit the output bound: an event alone over it is cut inside, and paging still reaches every event once. */

import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { migrate } from "../lib/db.ts";
import { DEFAULT_MAX_OUTPUT_CHARS } from "../lib/mcp/mod.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { type EventInput, LIMITS } from "../lib/obs/mod.ts";
import { RunJobs, RunLock } from "../lib/runs/mod.ts";
import { withDb } from "./_helpers.ts";
import { callOk, memoryClient } from "./mcp_support.ts";

/** An id of the longest length ingest accepts, distinct per `tag`. */
function longId(tag: string): string {
  return tag.padEnd(LIMITS.idChars, "x");
}

/**
 * An event at every bound ingest accepts (64 resources and 64 selection
 * candidates with ids of 256 characters and versions of 128, 32 `app.*`
 * attributes of 256 characters, scope ids of 256): over 70k characters of
 * JSON, more than the default output bound on its own.
 */
function oversizeEvent(id: string, second: number): EventInput {
  const refs = Array.from({ length: LIMITS.resources }, (_, i) => ({
    type: "document",
    id: longId(`${id}-doc-${i}-`),
    version: longId("v").slice(0, 128),
  }));
  return {
    event_id: id,
    application_id: "app-3",
    agent_id: longId("agent-"),
    memory_id: longId("memory-"),
    thread_id: longId("thread-"),
    root_trace_id: longId("root-"),
    turn_id: longId("turn-"),
    run_id: longId("run-"),
    kind: "retrieval",
    started_at: `2026-09-01T12:00:${String(second).padStart(2, "0")}Z`,
    resources: refs.map((ref) => ({ ...ref, role: "retrieved" as const })),
    selection: {
      candidates: refs.slice(0, LIMITS.candidates).map((ref, rank) => ({
        ref,
        rank,
        score: 1 / (rank + 1),
        selected: rank < 8,
        reason: "provider_rank" as const,
      })),
    },
    attributes: Object.fromEntries(
      Array.from(
        { length: LIMITS.attributes },
        (_, i) => [`app.note_${i}`, "v".repeat(LIMITS.attributeValueChars)],
      ),
    ),
  };
}

const BIG = [1, 2, 3].map((n) => oversizeEvent(`big-${n}`, n));
const SMALL: EventInput[] = [4, 5].map((second) => ({
  event_id: `small-${second}`,
  application_id: "app-3",
  agent_id: "agent-1",
  kind: "llm_call",
  started_at: `2026-09-01T12:00:0${second}Z`,
}));

async function withOversizeIndex(
  fn: (client: Client) => Promise<void>,
  options: { events?: EventInput[]; maxOutputChars?: number } = {},
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    await ingestEvents(db, options.events ?? [...BIG, ...SMALL]);
    const client = await memoryClient({
      db,
      dataDir,
      jobs: new RunJobs({ db, dataDir, lock: new RunLock() }),
      principal: { name: "admin", role: "admin", scope: {} },
      allowTraceQueries: true,
      ...(options.maxOutputChars === undefined
        ? {}
        : { maxOutputChars: options.maxOutputChars }),
    });
    try {
      await fn(client);
    } finally {
      await client.close();
    }
  });
}

interface Page {
  events: { event_id: string }[];
  next_cursor: string | null;
  truncated?: {
    max_chars: number;
    cuts: { path: string; kept: number; total: number }[];
    note: string;
  };
}

Deno.test("an oversize event is cut inside, not dropped, and counts what was cut", async () => {
  await withOversizeIndex(async (client) => {
    const answer = await callOk(client, "trace.query_traces", {
      q: "big-1",
    }) as unknown as Page;
    assert.deepEqual(answer.events.map((e) => e.event_id), ["big-1"]);
    assert.ok(JSON.stringify(answer).length <= DEFAULT_MAX_OUTPUT_CHARS);
    const cuts = answer.truncated?.cuts ?? [];
    assert.ok(cuts.length > 0, "the answer names its cuts");
    assert.ok(cuts.every((cut) => cut.path.startsWith("events[0].")));
    assert.ok(cuts.every((cut) => cut.kept < cut.total));
    // The largest list inside the event goes first, and totals are the event's own.
    const totals: Record<string, number> = {
      "events[0].selection.candidates": LIMITS.candidates,
      "events[0].resources": LIMITS.resources,
      "events[0].attributes": LIMITS.attributes,
    };
    assert.equal(cuts[0]!.path, "events[0].selection.candidates");
    for (const cut of cuts) assert.equal(cut.total, totals[cut.path]);
    // The event is still the event: what was kept is its head, unchanged.
    const event = answer.events[0] as unknown as {
      resources: { id: string }[];
      attributes: Record<string, string>;
    };
    assert.equal(event.resources[0]!.id, BIG[0]!.resources![0]!.id);
    assert.equal(event.attributes["app.note_0"], "v".repeat(256));
    assert.match(answer.truncated!.note, /never events themselves/);

    // Large extras beside it are cut too, and still never the event.
    const explained = await callOk(client, "trace.query_traces", {
      q: "big-2",
      explain: true,
      summary: true,
    }) as unknown as Page & { explain: { events_read: number } };
    assert.deepEqual(explained.events.map((e) => e.event_id), ["big-2"]);
    assert.equal(explained.explain.events_read, 3);
    assert.ok(JSON.stringify(explained).length <= DEFAULT_MAX_OUTPUT_CHARS);
    assert.ok(
      !(explained.truncated?.cuts ?? []).some((c) => c.path === "events"),
    );
  });
});

Deno.test("paging over oversize events shows each exactly once and never skips one", async () => {
  await withOversizeIndex(async (client) => {
    for (const limit of [2, 50]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await callOk(client, "trace.query_traces", {
          application_id: "app-3",
          limit,
          ...(cursor === null ? {} : { cursor }),
        }) as unknown as Page;
        assert.ok(page.events.length > 0, "a page shows at least one event");
        assert.ok(
          !(page.truncated?.cuts ?? []).some((c) => c.path === "events"),
          "the events list itself is never cut",
        );
        if (page.events.some((e) => e.event_id.startsWith("big-"))) {
          assert.equal(page.events.length, 1, "a big event is alone");
          assert.ok(page.truncated!.cuts.length > 0);
        }
        seen.push(...page.events.map((e) => e.event_id));
        cursor = page.next_cursor;
        pages++;
      } while (cursor !== null && pages < 10);
      assert.deepEqual(seen, [
        "small-5",
        "small-4",
        "big-3",
        "big-2",
        "big-1",
      ]);
    }
  });
});

Deno.test("an oversize event fits a small bound by cutting its attributes too", async () => {
  await withOversizeIndex(async (client) => {
    const answer = await callOk(
      client,
      "trace.query_traces",
    ) as unknown as Page;
    assert.deepEqual(answer.events.map((e) => e.event_id), ["big-1"]);
    assert.ok(JSON.stringify(answer).length <= 8_000);
    const attributes = answer.truncated!.cuts.find((c) =>
      c.path === "events[0].attributes"
    );
    assert.equal(attributes?.total, 32);
    assert.ok(attributes.kept < 32);
    const kept = Object.keys(
      (answer.events[0] as unknown as { attributes: object }).attributes,
    );
    assert.equal(kept.length, attributes.kept);
    assert.deepEqual(
      kept,
      Array.from({ length: attributes.kept }, (_, i) => `app.note_${i}`),
    );
  }, { events: [BIG[0]!], maxOutputChars: 8_000 });
});

/** Fixtures shared by the erasure tests: a provisioned database and a small, varied set of events. */

import assert from "node:assert/strict";
import { migrate, type TraceDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { backfill, parity } from "../lib/obs/maint/mod.ts";
import type { EventInput } from "../lib/obs/mod.ts";
import { withDb } from "./_helpers.ts";

/**
 * Statements that take an index back to schema version 6 as that build left
 * it: no archive records, no tombstone count, version 7 not applied.
 */
export const UNDO_VERSION_7: readonly string[] = [
  "DROP TRIGGER obs_counts_erased_event_insert",
  "DELETE FROM obs_counts WHERE key = 'erased_events'",
  "DROP TABLE obs_archived_envelopes",
  "DELETE FROM schema_migrations WHERE component = 'obs' AND version = 7",
];

/**
 * Statements expiring the envelope of `eventId` as source expiry's
 * compare-and-delete does (a grant, then the delete), with no archive
 * record, as a build before version 7 left it.
 */
export function expiredUnrecorded(eventId: string): string[] {
  return [
    `INSERT INTO obs_expiry_grants (seq, fingerprint, granted_at)
       SELECT seq, fingerprint, 0 FROM obs_envelopes WHERE event_id = '${eventId}'`,
    `DELETE FROM obs_envelopes WHERE event_id = '${eventId}'`,
  ];
}

/** A key every erasure test shares (32 bytes). */
export const TEST_KEY = new Uint8Array(32).fill(7);

/** Runs `fn` with a temp database holding every table. */
export async function withErasureDb<T>(
  fn: (db: TraceDb, dataDir: string) => Promise<T>,
): Promise<T> {
  return await withDb(async (db, dir) => {
    await migrate(db, ALL_MIGRATIONS);
    return await fn(db, dir);
  });
}

/** One event of application `app` with defaults filled in. */
export function event(
  id: string,
  fields: Partial<EventInput> = {},
): EventInput {
  return {
    event_id: id,
    application_id: "app",
    agent_id: "bot",
    kind: "llm_call",
    ...fields,
  };
}

/**
 * Application `app`: alice (two events in thread t1, one in t2 with a
 * selection and an outcome), bob (one in t3), two anonymous events in t4,
 * one event of memory m1 and, in application `other`, an alice event that
 * must survive every erasure of `app`.
 */
export const SEED: EventInput[] = [
  event("a1", {
    user_id: "alice",
    thread_id: "t1",
    store: "conversation",
    preview: "alice said ALICE_PREVIEW_ONE",
  }),
  event("a2", {
    user_id: "alice",
    thread_id: "t1",
    kind: "retrieval",
    resources: [{ type: "document", id: "doc-1", role: "retrieved" }],
    preview: "alice said ALICE_PREVIEW_TWO",
  }),
  event("a3", {
    user_id: "alice",
    thread_id: "t2",
    kind: "selection",
    selection: {
      candidates: [
        {
          ref: { type: "document", id: "doc-2" },
          selected: true,
          reason: "mmr_rank",
        },
        {
          ref: { type: "document", id: "doc-3" },
          selected: false,
          reason: "below_threshold",
        },
      ],
    },
    outcome: {
      verified: true,
      status: "success",
      artifact: { type: "ticket", id: "T-1" },
    },
    store: "tool_log",
  }),
  event("b1", {
    user_id: "bob",
    thread_id: "t3",
    preview: "bob said BOB_TEXT",
  }),
  event("n1", { thread_id: "t4", preview: "anonymous ANON_ONE" }),
  event("n2", { thread_id: "t4", preview: "anonymous ANON_TWO" }),
  event("m1", {
    agent_id: null,
    memory_id: "mem-1",
    user_id: "carol",
    kind: "memory_write",
    preview: "memory text MEM_TEXT",
  }),
  event("x1", {
    application_id: "other",
    user_id: "alice",
    thread_id: "t1",
    preview: "other app OTHER_ALICE",
  }),
];

/** Ingests `events` (default {@link SEED}). */
export async function seed(
  db: TraceDb,
  events: EventInput[] = SEED,
): Promise<void> {
  await ingestEvents(db, events);
}

/** Event ids of `application` still in the index rows, sorted. */
export async function indexedIds(
  db: TraceDb,
  application = "app",
): Promise<string[]> {
  const result = await db.client.execute({
    sql:
      "SELECT event_id FROM obs_events WHERE application_id = ? ORDER BY event_id",
    args: [application],
  });
  return result.rows.map((row) => String(row.event_id));
}

/** Rows of each table, over every application. */
export async function tableCounts(
  db: TraceDb,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (
    const table of [
      "obs_envelopes",
      "obs_events",
      "obs_resources",
      "obs_previews",
      "obs_expiry_grants",
    ]
  ) {
    const result = await db.client.execute(
      `SELECT COUNT(*) AS n FROM ${table}`,
    );
    counts[table] = Number(result.rows[0]!.n);
  }
  return counts;
}

/** True when `text` occurs anywhere in the database file or its WAL, read as raw bytes. */
export async function fileHolds(path: string, text: string): Promise<boolean> {
  const needle = new TextEncoder().encode(text);
  for (const file of [path, `${path}-wal`]) {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(file);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    if (indexOf(bytes, needle) >= 0) return true;
  }
  return false;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}

/** Every text and blob cell of every table that holds `needle`, as `table.column`. */
export async function cellsHolding(
  db: TraceDb,
  needle: string,
): Promise<string[]> {
  const tables = await db.client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
  );
  const found: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await db.client.execute(`SELECT * FROM "${String(name)}"`);
    for (const row of rows.rows) {
      for (const column of rows.columns) {
        const value = row[column];
        const text = value instanceof ArrayBuffer
          ? new TextDecoder().decode(value)
          : String(value);
        if (text.toLowerCase().includes(needle.toLowerCase())) {
          found.push(`${String(name)}.${column}`);
        }
      }
    }
  }
  return found;
}

/** Asserts the envelope count the index keeps is the number of envelopes. */
export async function assertEnvelopesCounted(db: TraceDb): Promise<void> {
  const counts = await db.client.execute(
    `SELECT (SELECT n FROM obs_counts WHERE key = 'envelopes') AS kept,
            (SELECT COUNT(*) FROM obs_envelopes) AS actual`,
  );
  assert.equal(counts.rows[0]!.kept, counts.rows[0]!.actual);
}

/** Asserts the index agrees with its envelopes: parity holds, a backfill changes nothing, the count is exact. */
export async function assertIndexAgrees(db: TraceDb): Promise<void> {
  const checked = await parity(db);
  assert.equal(checked.status, "ok", JSON.stringify(checked.mismatches));
  const rebuilt = await backfill(db);
  assert.equal(rebuilt.changed + rebuilt.missing + rebuilt.failed.length, 0);
  await assertEnvelopesCounted(db);
}

/**
 * Observability index benchmark (`deno task bench:obs`). A synthetic
 * workload of bundles (one root event and 499 children, 500 events per
 * bundle) is indexed through the real ingest path, then read back in 250-event
 * keyset pages through the query API, checking that the aggregate count
 * equals the paged count and that no cursor repeats a row. Each figure is set
 * against a floor measured on the same machine: the same `obs_events` rows
 * inserted raw into a fresh table in one prepared transaction, and a raw
 * indexed SELECT of one 250-row page. Machines are shared and noisy, so the
 * ratios matter more than the absolute numbers.
 *
 * Usage: deno run -A bench/obs_bench.ts [--max N] [--json]
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { Client, InValue } from "@libsql/client";
import { openDb, type TraceDb } from "../lib/db.ts";
import { chunkedInsert, EVENT_COLUMNS } from "../lib/obs/index_rows.ts";
import { ingestEvents } from "../lib/obs/ingest.ts";
import { normalizeEvent } from "../lib/obs/normalize.ts";
import { queryTraceEvents } from "../lib/obs/query.ts";
import { initializeObs } from "../lib/obs/schema.ts";
import { summarizeTraceEvents } from "../lib/obs/summaries.ts";
import { percentile } from "../lib/obs/_maint_probes.ts";

const SIZES = [10_000, 100_000, 1_000_000] as const;
const BUNDLE = 500;
const PAGE = 250;
const APP = "bench-app";
const BASE_TS = Date.parse("2026-09-01T00:00:00Z");
const KINDS = [
  "retrieval",
  "selection",
  "memory_search",
  "llm_call",
  "tool_call",
] as const;

/** Figures of one workload size. */
interface Row {
  events: number;
  indexSeconds: number;
  validateSeconds: number;
  floorInsertSeconds: number;
  /** Seconds to insert the same rows into a copy of obs_events with all its indexes. */
  indexedFloorSeconds: number;
  /** Seconds of each floor variant. */
  floors: Record<string, number>;
  pages: number;
  pageP50: number;
  pageP95: number;
  floorPageP50: number;
  floorPageP95: number;
  summaryCount: number;
  pagedCount: number;
  duplicates: number;
  dbBytes: number;
}

/** Events of bundle `b`: a root followed by its children, in time order. */
function bundle(b: number): Record<string, unknown>[] {
  const root = `b${b}-root`;
  const events: Record<string, unknown>[] = [];
  for (let i = 0; i < BUNDLE; i++) {
    const at = BASE_TS + (b * BUNDLE + i) * 10;
    events.push({
      event_id: i === 0 ? root : `b${b}-c${i}`,
      application_id: APP,
      user_id: `user-${b % 16}`,
      agent_id: `agent-${b % 8}`,
      thread_id: `thread-${b % 64}`,
      root_trace_id: root,
      parent_event_id: i === 0 ? null : root,
      kind: i === 0 ? "intent" : KINDS[i % KINDS.length],
      status: i % 97 === 0 ? "error" : "ok",
      started_at: new Date(at).toISOString(),
      ended_at: new Date(at + 5).toISOString(),
      resources: [{
        type: "doc",
        id: `doc-${(b * 7 + i) % 5000}`,
        role: "retrieved",
      }],
      attributes: { "gen_ai.operation.name": "search_memory" },
    });
  }
  return events;
}

async function freshDb(): Promise<{ db: TraceDb; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "trace-obs-bench-" });
  return { db: await openDb({ dataDir: dir }), dir };
}

async function indexWorkload(db: TraceDb, events: number) {
  let indexMs = 0;
  let validateMs = 0;
  for (let b = 0; b < events / BUNDLE; b++) {
    const batch = bundle(b);
    const v0 = performance.now();
    for (let i = 0; i < batch.length; i++) normalizeEvent(batch[i], i);
    validateMs += performance.now() - v0;
    const t0 = performance.now();
    await ingestEvents(db, batch, { source: "import" });
    indexMs += performance.now() - t0;
  }
  return { indexSeconds: indexMs / 1000, validateSeconds: validateMs / 1000 };
}

async function pageThrough(db: TraceDb) {
  const seen = new Set<number>();
  const timings: number[] = [];
  let duplicates = 0;
  let cursor: string | undefined;
  for (;;) {
    const t0 = performance.now();
    const page = await queryTraceEvents(db, {
      application_id: APP,
      limit: PAGE,
      ...(cursor ? { cursor } : {}),
    });
    timings.push(performance.now() - t0);
    for (const event of page.events) {
      if (seen.has(event.seq)) duplicates++;
      seen.add(event.seq);
    }
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return { timings, paged: seen.size, duplicates };
}

/** Ways of inserting the floor rows; the faster one is the floor. */
const FLOOR_VARIANTS = ["prepared_rows", "multi_row_values"] as const;
type FloorVariant = typeof FLOOR_VARIANTS[number];

/**
 * Copies the stored index rows into a fresh table in one transaction, timing
 * only the inserts: one prepared single-row INSERT per row, or multi-row
 * VALUES statements of 400 rows.
 */
async function floorInsert(
  client: Client,
  variant: FloorVariant | "same_indexes",
): Promise<number> {
  const table = `floor_${variant}`;
  if (variant === "same_indexes") await cloneEventsTable(client, table);
  else {
    await client.execute(
      `CREATE TABLE ${table} AS SELECT * FROM obs_events WHERE 0`,
    );
  }
  const columns = EVENT_COLUMNS.join(", ");
  const single = `INSERT INTO ${table} (${columns}) VALUES (${
    EVENT_COLUMNS.map(() => "?").join(", ")
  })`;
  const tx = await client.transaction("write");
  let insertMs = 0;
  try {
    for (let after = 0; after < Number.MAX_SAFE_INTEGER;) {
      const chunk = await tx.execute({
        sql:
          `SELECT ${columns} FROM obs_events WHERE seq > ? ORDER BY seq LIMIT 20000`,
        args: [after],
      });
      if (chunk.rows.length === 0) break;
      const rows = chunk.rows.map((row) =>
        EVENT_COLUMNS.map((c) => row[c] as InValue)
      );
      const statements = variant === "prepared_rows"
        ? rows.map((args) => ({ sql: single, args }))
        : chunkedInsert(table, EVENT_COLUMNS, rows);
      const t0 = performance.now();
      await tx.batch(statements);
      insertMs += performance.now() - t0;
      after = Number(chunk.rows.at(-1)!.seq);
    }
    const t0 = performance.now();
    await tx.commit();
    insertMs += performance.now() - t0;
  } finally {
    tx.close();
  }
  await client.execute(`DROP TABLE ${table}`);
  return insertMs / 1000;
}

/** Creates `table` with the exact definition and secondary indexes of `obs_events`. */
async function cloneEventsTable(client: Client, table: string): Promise<void> {
  const schema = await client.execute(
    "SELECT type, sql FROM sqlite_master WHERE tbl_name = 'obs_events' AND sql IS NOT NULL ORDER BY type DESC",
  );
  for (const row of schema.rows) {
    const sql = String(row.sql)
      .replace(/\bobs_events\b/g, table)
      .replace(/INDEX (\w+) ON/, `INDEX ${table}_$1 ON`);
    await client.execute(sql);
  }
}

/** The page columns the query API returns, selected the plain way: row by row. */
const FLOOR_PAGE_COLUMNS = [
  ...EVENT_COLUMNS.filter((c) => c !== "fingerprint").map((c) => `e.${c}`),
  "p.chars",
  "p.truncated",
].join(", ");

/** Raw keyset SELECTs of one 250-row page at spread-out positions of the tenant index. */
async function floorPages(client: Client, events: number): Promise<number[]> {
  const timings: number[] = [];
  const samples = 200;
  for (let i = 0; i < samples; i++) {
    // Positions from the newest page down to one full page above the oldest.
    const index = PAGE +
      Math.floor(((i * 7919) % samples) / samples * (events - PAGE));
    const t0 = performance.now();
    await client.execute({
      sql:
        `SELECT ${FLOOR_PAGE_COLUMNS} FROM obs_events e LEFT JOIN obs_previews p ON p.seq = e.seq
            WHERE e.application_id = ? AND (e.ts, e.seq) < (?, ?)
            ORDER BY e.ts DESC, e.seq DESC LIMIT ${PAGE}`,
      args: [APP, BASE_TS + index * 10, 0],
    });
    timings.push(performance.now() - t0);
  }
  return timings;
}

async function dbBytes(client: Client): Promise<number> {
  const count = await client.execute("PRAGMA page_count");
  const size = await client.execute("PRAGMA page_size");
  return Number(Object.values(count.rows[0]!)[0]) *
    Number(Object.values(size.rows[0]!)[0]);
}

async function runSize(
  events: number,
  log: (line: string) => void,
): Promise<Row> {
  const { db, dir } = await freshDb();
  try {
    await initializeObs(db);
    log(`${events} events: indexing`);
    const { indexSeconds, validateSeconds } = await indexWorkload(db, events);
    log(`${events} events: paging`);
    const { timings, paged, duplicates } = await pageThrough(db);
    const summary = await summarizeTraceEvents(db, { application_id: APP });
    log(`${events} events: floor`);
    const floorPageTimings = await floorPages(db.client, events);
    const floors: Record<string, number> = {};
    for (const variant of FLOOR_VARIANTS) {
      floors[variant] = await floorInsert(db.client, variant);
    }
    const floorInsertSeconds = Math.min(...Object.values(floors));
    const indexedFloorSeconds = await floorInsert(db.client, "same_indexes");
    return {
      events,
      indexSeconds,
      validateSeconds,
      floorInsertSeconds,
      indexedFloorSeconds,
      floors,
      pages: timings.length,
      pageP50: percentile(timings, 50),
      pageP95: percentile(timings, 95),
      floorPageP50: percentile(floorPageTimings, 50),
      floorPageP95: percentile(floorPageTimings, 95),
      summaryCount: summary.events,
      pagedCount: paged,
      duplicates,
      dbBytes: await dbBytes(db.client),
    };
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const f = (n: number, digits = 2) => n.toFixed(digits);

/** The Markdown report of all measured sizes. */
function renderTable(rows: Row[]): string {
  const lines = [
    "| events | indexing (s) | events/s | of which validation (s) | raw insert floor (s) | ingest / floor | same rows into an identically indexed table (s) | ingest / indexed floor | page p50 (ms) | page p95 (ms) | raw page p50 / p95 (ms) | page p95 / floor p95 | pages | summary = paged | cursor duplicates |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.events.toLocaleString("en-US")} | ${f(r.indexSeconds)} | ${
        Math.round(r.events / r.indexSeconds).toLocaleString("en-US")
      } | ${f(r.validateSeconds)} | ${f(r.floorInsertSeconds)} | ${
        f(r.indexSeconds / r.floorInsertSeconds, 1)
      }x | ${f(r.indexedFloorSeconds)} | ${
        f(r.indexSeconds / r.indexedFloorSeconds, 1)
      }x | ${f(r.pageP50)} | ${f(r.pageP95)} | ${f(r.floorPageP50)} / ${
        f(r.floorPageP95)
      } | ${f(r.pageP95 / r.floorPageP95, 1)}x | ${r.pages} | ${
        r.summaryCount === r.pagedCount && r.pagedCount === r.events
          ? "yes"
          : "NO"
      } | ${r.duplicates} |`,
    );
  }
  return lines.join("\n");
}

function renderTargets(rows: Row[]): string {
  const lines: string[] = [];
  const at = (n: number) => rows.find((r) => r.events === n);
  const mark = (ok: boolean) => ok ? "met" : "missed";
  const small = at(10_000);
  if (small) {
    lines.push(
      `- 10,000 events indexed in < 0.5 s: ${f(small.indexSeconds)} s, ${
        mark(small.indexSeconds < 0.5)
      }`,
    );
    lines.push(
      `- page p95 < 5 ms at 10,000: ${f(small.pageP95)} ms, ${
        mark(small.pageP95 < 5)
      }`,
    );
  }
  const large = at(1_000_000);
  if (large) {
    lines.push(
      `- page p95 < 20 ms at 1,000,000: ${f(large.pageP95)} ms, ${
        mark(large.pageP95 < 20)
      }`,
    );
  }
  for (const r of rows) {
    const ratio = r.indexSeconds / r.floorInsertSeconds;
    lines.push(
      `- ingest within 2x of the raw floor at ${
        r.events.toLocaleString("en-US")
      }: ${f(ratio, 1)}x, ${mark(ratio <= 2)} (${
        f(r.indexSeconds / r.indexedFloorSeconds, 1)
      }x of inserting the same rows with the same indexes)`,
    );
  }
  return lines.join("\n");
}

async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      max: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const max = values.max === undefined ? Infinity : Number(values.max);
  if (!(max >= SIZES[0])) {
    throw new RangeError(
      `--max must be at least ${SIZES[0]}, got ${values.max}`,
    );
  }
  // deno-lint-ignore no-console
  const log = (line: string) => console.error(line);
  const rows: Row[] = [];
  for (const size of SIZES.filter((n) => n <= max)) {
    rows.push(await runSize(size, log));
  }
  // deno-lint-ignore no-console
  console.log(
    values.json
      ? JSON.stringify(rows)
      : `${renderTable(rows)}\n\nTargets:\n${renderTargets(rows)}`,
  );
  return rows.every((r) =>
      r.summaryCount === r.pagedCount && r.duplicates === 0
    )
    ? 0
    : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));

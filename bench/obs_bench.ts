/**
 * Observability index benchmark (`deno task bench:obs`). A synthetic
 * workload of bundles (one root event and 499 children, 500 events per
 * bundle) is indexed through the real ingest path, then read back in 250-event
 * keyset pages through the query API, checking that the aggregate count
 * equals the paged count and that no cursor repeats a row. Each figure is set
 * against a floor measured on the same machine: every row ingest wrote
 * (envelopes, events, resources) inserted raw into fresh copies of the tables
 * in one prepared transaction, once into plain tables and once into tables
 * with the same indexes; and a raw indexed SELECT of one page packaged the way
 * the query API packages it. Machines are shared and noisy, so the ratios
 * matter more than the absolute numbers.
 *
 * At each size it also times health and summaries, and how long each holds
 * the event loop (the longest gap a 2 ms timer sees): a fresh `obsHealth`,
 * a `HealthMonitor` report once its link checks are kept (and 20 callers at
 * once), and a summary with and without an indexed scope. Last, it posts
 * each denial-of-service body of `tests/_obs_dos.ts` (in a process of its
 * own) and reports the answer, its time and the memory it cost.
 *
 * Usage: deno run -A bench/obs_bench.ts [--max N] [--json]
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { Client, InStatement, InValue, Transaction } from "@libsql/client";
import { openDb, type TraceDb } from "../lib/db.ts";
import {
  chunkedInsert,
  EVENT_COLUMNS,
  ingestEvents,
} from "../lib/obs/ingest/mod.ts";
import { initializeObs, normalizeEvent } from "../lib/obs/mod.ts";
import {
  queryTraceEvents,
  summarizeTraceEvents,
} from "../lib/obs/query/mod.ts";
import { HealthMonitor, obsHealth, percentile } from "../lib/obs/maint/mod.ts";

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
  /** Seconds to insert the same rows into plain copies of the tables (best statement shape). */
  floorInsertSeconds: number;
  /** Seconds to insert the same rows into exact copies of the tables, indexes included (best shape). */
  indexedFloorSeconds: number;
  /** Seconds of each floor variant, by `tables/shape`. */
  floors: Record<string, number>;
  pages: number;
  pageP50: number;
  pageP95: number;
  /** The page floor: one raw keyset SELECT packaged as a JSON array, as the product reads. */
  floorPageP50: number;
  floorPageP95: number;
  /** The same page fetched row by row (shown for comparison). */
  rowPageP50: number;
  rowPageP95: number;
  summaryCount: number;
  pagedCount: number;
  duplicates: number;
  dbBytes: number;
  health: HealthFigures;
}

/** Timings of health and summaries at one size, with the longest event-loop gap each caused. */
interface HealthFigures {
  freshMs: number;
  freshGapMs: number;
  keptP50Ms: number;
  keptP95Ms: number;
  keptGapMs: number;
  concurrent20Ms: number;
  summaryScopedMs: number;
  summaryScopedGapMs: number;
  summaryUnscopedMs: number;
  summaryUnscopedGapMs: number;
}

/** Runs `fn` and reports its time and the longest gap a 2 ms timer saw meanwhile. */
async function timedWithGap(
  fn: () => Promise<unknown>,
): Promise<{ ms: number; gapMs: number }> {
  let last = performance.now();
  let gap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 2);
  try {
    const t0 = performance.now();
    last = t0;
    await fn();
    const ms = performance.now() - t0;
    gap = Math.max(gap, performance.now() - last);
    return { ms, gapMs: gap };
  } finally {
    clearInterval(timer);
  }
}

async function measureHealth(db: TraceDb): Promise<HealthFigures> {
  const fresh = await timedWithGap(() => obsHealth(db, { latencySamples: 1 }));
  const monitor = new HealthMonitor(db, { processCounters: true });
  await monitor.report();
  const kept: number[] = [];
  let keptGap = 0;
  for (let i = 0; i < 20; i++) {
    const run = await timedWithGap(() => monitor.report());
    kept.push(run.ms);
    keptGap = Math.max(keptGap, run.gapMs);
  }
  const concurrent = await timedWithGap(() =>
    Promise.all(Array.from({ length: 20 }, () => monitor.report()))
  );
  await monitor.idle();
  const scoped = await timedWithGap(() =>
    summarizeTraceEvents(db, { application_id: APP })
  );
  const unscoped = await timedWithGap(() =>
    summarizeTraceEvents(db, { kinds: ["llm_call"] })
  );
  return {
    freshMs: fresh.ms,
    freshGapMs: fresh.gapMs,
    keptP50Ms: percentile(kept, 50),
    keptP95Ms: percentile(kept, 95),
    keptGapMs: keptGap,
    concurrent20Ms: concurrent.ms,
    summaryScopedMs: scoped.ms,
    summaryScopedGapMs: scoped.gapMs,
    summaryUnscopedMs: unscoped.ms,
    summaryUnscopedGapMs: unscoped.gapMs,
  };
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

/** Tables ingest writes, in foreign-key order (an event before its resources). */
const WRITTEN_TABLES = [
  "obs_envelopes",
  "obs_events",
  "obs_resources",
  "obs_previews",
] as const;

/** Statement shapes for the floor inserts; the faster one counts. */
const FLOOR_SHAPES = ["prepared_rows", "multi_row_values"] as const;
type FloorShape = typeof FLOOR_SHAPES[number];

/**
 * Table shapes for the floor inserts: `plain` keeps each table's columns and
 * primary key (the row's storage key) but no secondary index, UNIQUE
 * constraint or foreign key; `same_indexes` is an exact copy, with every
 * index, constraint, foreign key and trigger the product's tables have.
 */
const FLOOR_TABLES = ["plain", "same_indexes"] as const;
type FloorTables = typeof FLOOR_TABLES[number];

/**
 * Creates floor copies of the written tables; returns their names by source
 * table. Names of tables, indexes and triggers get a prefix, so the copies
 * reference each other (the resource -> event foreign key stays a real one).
 */
async function cloneWrittenTables(
  client: Client,
  prefix: string,
  tables: FloorTables,
): Promise<Map<string, string>> {
  const names = new Map<string, string>(
    WRITTEN_TABLES.map((t) => [t, `${prefix}_${t}`]),
  );
  const rename = (sql: string) =>
    sql
      .replace(/\b(INDEX|TRIGGER) (\w+)/, `$1 ${prefix}_$2`)
      .replace(
        /\bobs_(envelopes|events|resources|previews)\b/g,
        (table) => names.get(table)!,
      );
  const schema = await client.execute({
    sql: `SELECT type, sql FROM sqlite_master
          WHERE tbl_name IN (SELECT value FROM json_each(?)) AND sql IS NOT NULL
          ORDER BY type = 'table' DESC, rowid`,
    args: [JSON.stringify(WRITTEN_TABLES)],
  });
  for (const row of schema.rows) {
    let sql = rename(String(row.sql));
    if (tables === "plain") {
      if (row.type !== "table") continue;
      sql = sql
        .replace(/,\s*UNIQUE\s*\([^)]*\)/gi, "")
        .replace(
          /\s+REFERENCES\s+\w+\s*\([^)]*\)(\s+ON DELETE CASCADE)?/gi,
          "",
        );
    }
    await client.execute(sql);
  }
  return names;
}

/** Columns of each written table, in table order. */
async function columnsOf(client: Client, table: string): Promise<string[]> {
  const result = await client.execute(
    `SELECT name FROM pragma_table_info('${table}') ORDER BY cid`,
  );
  return result.rows.map((row) => String(row.name));
}

/**
 * How the floor commits: one transaction for every row (the textbook bulk
 * load), or one per 500-event bundle as ingest does; a single transaction
 * larger than the page cache spills to the WAL mid-way, so neither is always
 * the faster and the floor takes the better.
 */
const FLOOR_COMMITS = ["one_transaction", "per_bundle"] as const;
/** Sizes from which the single-transaction floor variants are skipped. */
const SINGLE_TRANSACTION_LIMIT = 1_000_000;
type FloorCommit = typeof FLOOR_COMMITS[number];

/** Reads back the rows ingest wrote for events `after < seq <= hi`, as insert statements. */
async function floorStatements(
  reader: Client | Transaction,
  names: Map<string, string>,
  columns: Map<string, string[]>,
  shape: FloorShape,
  range: [number, number],
): Promise<InStatement[]> {
  const statements: InStatement[] = [];
  for (const table of WRITTEN_TABLES) {
    const cols = columns.get(table)!;
    const chunk = await reader.execute({
      sql: `SELECT ${cols.join(", ")} FROM ${table}
            WHERE seq > ? AND seq <= ? ORDER BY seq`,
      args: range,
    });
    const rows = chunk.rows.map((row) => cols.map((c) => row[c] as InValue));
    const target = names.get(table)!;
    const single = `INSERT INTO ${target} (${cols.join(", ")}) VALUES (${
      cols.map(() => "?").join(", ")
    })`;
    statements.push(
      ...(shape === "prepared_rows"
        ? rows.map((args) => ({ sql: single, args }))
        : chunkedInsert(target, cols, rows)),
    );
  }
  return statements;
}

/**
 * The floor: every row ingest wrote (envelopes, events, resources, previews)
 * inserted again by plain SQL into fresh copies of the tables with prepared
 * statements. Rows are read back before each timed write (in chunks of
 * 20,000 events, or one bundle), so only inserting and committing count.
 */
async function floorInsert(
  client: Client,
  variant: { shape: FloorShape; tables: FloorTables; commit: FloorCommit },
): Promise<number> {
  const { shape, tables, commit } = variant;
  const names = await cloneWrittenTables(
    client,
    `floor_${shape}_${tables}`,
    tables,
  );
  const columns = new Map<string, string[]>();
  for (const table of WRITTEN_TABLES) {
    columns.set(table, await columnsOf(client, table));
  }
  const step = commit === "per_bundle" ? BUNDLE : 20_000;
  const seqs = await client.execute(
    "SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM obs_events",
  );
  const first = Number(seqs.rows[0]!.lo) - 1;
  const last = Number(seqs.rows[0]!.hi);
  let insertMs = 0;
  if (commit === "per_bundle") {
    for (let after = first; after < last; after += step) {
      const range: [number, number] = [after, Math.min(last, after + step)];
      const statements = await floorStatements(
        client,
        names,
        columns,
        shape,
        range,
      );
      const t0 = performance.now();
      await client.batch(statements, "write");
      insertMs += performance.now() - t0;
    }
  } else {
    const tx = await client.transaction("write");
    try {
      for (let after = first; after < last; after += step) {
        const range: [number, number] = [after, Math.min(last, after + step)];
        const statements = await floorStatements(
          tx,
          names,
          columns,
          shape,
          range,
        );
        const t0 = performance.now();
        await tx.batch(statements);
        insertMs += performance.now() - t0;
      }
      const t0 = performance.now();
      await tx.commit();
      insertMs += performance.now() - t0;
    } finally {
      tx.close();
    }
  }
  for (const table of [...names.values()].reverse()) {
    await client.execute(`DROP TABLE ${table}`);
  }
  return insertMs / 1000;
}

/** Best (fastest) statement shape and commit size for one table shape. */
async function bestFloor(
  client: Client,
  tables: FloorTables,
  floors: Record<string, number>,
  events: number,
): Promise<number> {
  const times: number[] = [];
  // The libSQL client's memory grows with every statement it runs (24 GiB
  // seen at a million events), so at that size the floor uses only multi-row
  // statements committed per bundle.
  const large = events >= SINGLE_TRANSACTION_LIMIT;
  const commits = large ? ["per_bundle"] as const : FLOOR_COMMITS;
  const shapes = large ? ["multi_row_values"] as const : FLOOR_SHAPES;
  for (const shape of shapes) {
    for (const commit of commits) {
      const seconds = await floorInsert(client, { shape, tables, commit });
      floors[`${tables}/${shape}/${commit}`] = seconds;
      times.push(seconds);
    }
  }
  return Math.min(...times);
}

/** The page columns the query API returns (preview content never). */
const FLOOR_PAGE_COLUMNS = [
  ...EVENT_COLUMNS.filter((c) => c !== "fingerprint").map((c) => `e.${c}`),
  "p.chars",
  "p.truncated",
].join(", ");

/** Page positions spread over the tenant index, newest page down to one above the oldest. */
function pagePositions(events: number, samples: number): number[] {
  return Array.from(
    { length: samples },
    (_, i) =>
      PAGE + 1 +
      Math.floor(((i * 7919) % samples) / samples * (events - PAGE - 1)),
  );
}

/**
 * Raw keyset SELECTs of one page (250 rows plus the one that tells whether
 * more exist, as the query API reads), timed until the rows are JavaScript
 * values. `packaged` builds the page as one JSON array in SQLite and parses
 * it, as the product does (the floor); `rows` fetches row by row.
 */
async function floorPages(
  client: Client,
  events: number,
  packaging: "packaged" | "rows",
): Promise<number[]> {
  const inner = `SELECT * FROM obs_events e
    WHERE e.application_id = ? AND (e.ts, e.seq) < (?, ?)
    ORDER BY e.ts DESC, e.seq DESC LIMIT ${PAGE + 1}`;
  const sql = packaging === "packaged"
    ? `SELECT json_group_array(json_array(${FLOOR_PAGE_COLUMNS})
         ORDER BY e.ts DESC, e.seq DESC) AS page
       FROM (${inner}) e LEFT JOIN obs_previews p ON p.seq = e.seq`
    : `SELECT ${FLOOR_PAGE_COLUMNS}
       FROM (${inner}) e LEFT JOIN obs_previews p ON p.seq = e.seq
       ORDER BY e.ts DESC, e.seq DESC`;
  const timings: number[] = [];
  for (const index of pagePositions(events, 200)) {
    const t0 = performance.now();
    const result = await client.execute({
      sql,
      args: [APP, BASE_TS + index * 10, 0],
    });
    const rows = packaging === "packaged"
      ? JSON.parse(String(result.rows[0]?.page ?? "[]")) as unknown[]
      : result.rows;
    timings.push(performance.now() - t0);
    if (rows.length !== PAGE + 1) {
      throw new Error(`floor page held ${rows.length} rows, not ${PAGE + 1}`);
    }
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
    const summary = await summarizeTraceEvents(db, { application_id: APP }, {
      maxEvents: Number.MAX_SAFE_INTEGER,
    });
    log(`${events} events: health and summaries`);
    const health = await measureHealth(db);
    log(`${events} events: floor`);
    const floorPageTimings = await floorPages(db.client, events, "packaged");
    const rowPageTimings = await floorPages(db.client, events, "rows");
    const floors: Record<string, number> = {};
    const floorInsertSeconds = await bestFloor(
      db.client,
      "plain",
      floors,
      events,
    );
    const indexedFloorSeconds = await bestFloor(
      db.client,
      "same_indexes",
      floors,
      events,
    );
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
      rowPageP50: percentile(rowPageTimings, 50),
      rowPageP95: percentile(rowPageTimings, 95),
      summaryCount: summary.events,
      pagedCount: paged,
      duplicates,
      dbBytes: await dbBytes(db.client),
      health,
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
    "| events | indexing (s) | events/s | of which validation (s) | floor: plain tables (s) | ingest / plain floor | floor: same indexes (s) | ingest / same-index floor | page p50 (ms) | page p95 (ms) | floor page p50 / p95 (ms) | page p95 / floor p95 | row-by-row page p50 / p95 (ms) | pages | summary = paged | cursor duplicates |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|",
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
      } | ${f(r.pageP95 / r.floorPageP95, 1)}x | ${f(r.rowPageP50)} / ${
        f(r.rowPageP95)
      } | ${r.pages} | ${
        r.summaryCount === r.pagedCount && r.pagedCount === r.events
          ? "yes"
          : "NO"
      } | ${r.duplicates} |`,
    );
  }
  return lines.join("\n");
}

/** The health and summary table: each time with the longest event-loop gap it caused. */
function renderHealthTable(rows: Row[]): string {
  const lines = [
    "| events | obsHealth, fresh (ms) / loop gap | monitor report p50 / p95 (ms) / loop gap | 20 callers at once (ms) | summary, tenant (ms) / loop gap | summary, kind only (ms) / loop gap |",
    "|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    const h = r.health;
    lines.push(
      `| ${r.events.toLocaleString("en-US")} | ${f(h.freshMs, 0)} / ${
        f(h.freshGapMs, 0)
      } | ${f(h.keptP50Ms, 1)} / ${f(h.keptP95Ms, 1)} / ${
        f(h.keptGapMs, 0)
      } | ${f(h.concurrent20Ms, 0)} | ${f(h.summaryScopedMs, 0)} / ${
        f(h.summaryScopedGapMs, 0)
      } | ${f(h.summaryUnscopedMs, 0)} / ${f(h.summaryUnscopedGapMs, 0)} |`,
    );
  }
  return lines.join("\n");
}

/** What one denial-of-service body cost, as `tests/_obs_dos.ts` reports it. */
interface DosRow {
  body: string;
  gzipped_bytes: number;
  status: number;
  seconds: number;
  rss_growth_mb: number;
}

async function measureDosBodies(): Promise<DosRow[]> {
  const rows: DosRow[] = [];
  for (const body of ["otlp-protobuf", "otlp-json", "ndjson", "json-array"]) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "tests/_obs_dos.ts", body],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    rows.push(JSON.parse(new TextDecoder().decode(output.stdout)) as DosRow);
  }
  return rows;
}

function renderDosTable(rows: DosRow[]): string {
  const lines = [
    "| body | gzipped | answer | seconds | resident memory growth (MB) |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.body} | ${
        (r.gzipped_bytes / 1024).toFixed(1)
      } KiB | ${r.status} | ${f(r.seconds)} | ${f(r.rss_growth_mb, 0)} |`,
    );
  }
  return lines.join("\n");
}

/** How the floors are measured, printed under the table. */
const FLOOR_NOTE = [
  "Floors, on the same machine and database:",
  "- ingest: every row ingest wrote (envelopes, events, resources) inserted again by plain SQL with prepared statements, the best of single-row and multi-row INSERTs, each committed in one transaction and in one per 500-event bundle (as ingest commits); rows are read back outside the timing, and nothing is validated, normalized or hashed. Ingest includes validation, normalization, hashing and its id-ownership check.",
  "  - plain tables: the same columns and primary keys, no secondary index, UNIQUE constraint or foreign key;",
  "  - same indexes: exact copies of the tables with every index, constraint and foreign key.",
  "- page: one raw keyset SELECT of 251 rows (a page plus the row that says whether more exist) over the tenant index, packaged by SQLite as one JSON array and parsed, as the query API reads; the row-by-row column fetches the same rows one by one.",
].join("\n");

const mark = (ok: boolean) => ok ? "met" : "not met";

function renderTargets(rows: Row[], dos: DosRow[]): string {
  const lines: string[] = [];
  const at = (n: number) => rows.find((r) => r.events === n);
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
  } else {
    lines.push("- page p95 < 20 ms at 1,000,000: not measured in this run");
  }
  for (const r of rows) {
    const n = r.events.toLocaleString("en-US");
    const plain = r.indexSeconds / r.floorInsertSeconds;
    const indexed = r.indexSeconds / r.indexedFloorSeconds;
    lines.push(
      `- ingest within 2x of the floor at ${n}: ${
        f(indexed, 1)
      }x of the same-index floor, ${mark(indexed <= 2)}; ${
        f(plain, 1)
      }x of the plain-table floor, ${mark(plain <= 2)}`,
    );
  }
  lines.push(...healthTargets(rows, dos));
  return lines.join("\n");
}

/** Targets of health, summaries and the denial-of-service bodies. */
function healthTargets(rows: Row[], dos: DosRow[]): string[] {
  const lines: string[] = [];
  for (const r of rows) {
    const h = r.health;
    const n = r.events.toLocaleString("en-US");
    const gap = Math.max(
      h.freshGapMs,
      h.keptGapMs,
      h.summaryScopedGapMs,
      h.summaryUnscopedGapMs,
    );
    lines.push(
      `- health (monitor report) p95 < 100 ms at ${n}: ${
        f(h.keptP95Ms, 1)
      } ms, ${
        mark(h.keptP95Ms < 100)
      }; longest event-loop gap of health and summaries: ${f(gap, 0)} ms, ${
        mark(gap < 200)
      } (< 200 ms)`,
    );
  }
  for (const d of dos) {
    const ok = (d.status === 413 || d.status === 400) && d.seconds < 1 &&
      d.rss_growth_mb < 300;
    lines.push(
      `- ${d.body} body refused in < 1 s with < 300 MB: ${d.status} in ${
        f(d.seconds)
      } s, ${f(d.rss_growth_mb, 0)} MB, ${mark(ok)}`,
    );
  }
  return lines;
}

const USAGE = "usage: deno task bench:obs [--max N] [--json]";

async function main(args: string[]): Promise<number> {
  let values: { max?: string | undefined; json?: boolean | undefined };
  try {
    // `deno task bench:obs -- --max N` passes the separator through.
    ({ values } = parseArgs({
      args: args[0] === "--" ? args.slice(1) : args,
      options: {
        max: { type: "string" },
        json: { type: "boolean", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    // deno-lint-ignore no-console
    console.error(`${(error as Error).message.split(".")[0]}; ${USAGE}`);
    return 2;
  }
  const max = values.max === undefined ? Infinity : Number(values.max);
  if (!(max >= SIZES[0])) {
    // deno-lint-ignore no-console
    console.error(
      `--max must be a number of at least ${
        SIZES[0]
      }, got ${values.max}; ${USAGE}`,
    );
    return 2;
  }
  // deno-lint-ignore no-console
  const log = (line: string) => console.error(line);
  const rows: Row[] = [];
  for (const size of SIZES.filter((n) => n <= max)) {
    rows.push(await runSize(size, log));
  }
  log("denial-of-service bodies");
  const dos = await measureDosBodies();
  // deno-lint-ignore no-console
  console.log(
    values.json
      ? JSON.stringify({ sizes: rows, dos })
      : `${renderTable(rows)}\n\n${FLOOR_NOTE}\n\nHealth and summaries:\n\n${
        renderHealthTable(rows)
      }\n\nDenial-of-service bodies:\n\n${renderDosTable(dos)}\n\nTargets:\n${
        renderTargets(rows, dos)
      }`,
  );
  return rows.every((r) =>
      r.summaryCount === r.pagedCount && r.duplicates === 0
    )
    ? 0
    : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));

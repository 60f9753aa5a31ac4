/**
 * Every query path of the index keeps its index. Each case runs the real
 * function (a page with one filter, a summary, health, backfill, parity,
 * retention, expiry, ingest's ownership check) through a client that records
 * its statements, asks SQLite for the plan of each (`EXPLAIN QUERY PLAN`),
 * and checks that the indexes the path needs are used and that no large
 * table is scanned whole unless the case says why. An index dropped or
 * reshaped, or a query rewritten so it no longer matches one, fails here
 * instead of turning into a slow page at a million events.
 */

import assert from "node:assert/strict";
import { type Client, createClient } from "@libsql/client";
import type { TraceDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs, registerCoverageProfile } from "../lib/obs/mod.ts";
import {
  exportEvents,
  findTraceRoots,
  queryTraceEvents,
  summarizeTraceEvents,
  traceOverview,
  type TraceQuery,
} from "../lib/obs/query/mod.ts";
import {
  applyExpiry,
  backfill,
  eraseNow,
  type ErasureSubjectInput,
  obsHealth,
  parity,
  parseErasureSubject,
  planErasure,
  planExpiry,
  retention,
} from "../lib/obs/maint/mod.ts";
import { createSelfStagingAdapter } from "../lib/obs/self_contract/mod.ts";
import { withDb } from "./_helpers.ts";
import { type RecordedStatement, recordingDb } from "./_obs_recording.ts";

const LARGE_TABLES = [
  "obs_events",
  "obs_envelopes",
  "obs_resources",
  "obs_previews",
  // One tombstone per event an erasure of scope all removed: it only grows.
  "obs_erased_events",
] as const;
const DAY = 86_400_000;
const NOW = Date.parse("2026-09-30T00:00:00Z");

/** Stands in {@link PlanCase.uses} for a lookup or range by `seq` (the rowid). */
const BY_SEQ = "INTEGER PRIMARY KEY";
/** Stands in {@link PlanCase.uses} for a search of a WITHOUT ROWID table's primary key. */
const BY_PRIMARY_KEY = "PRIMARY KEY";

/** A query path: what it runs, the indexes its plans must use, the whole-table scans it makes on purpose. */
interface PlanCase {
  name: string;
  run: (db: TraceDb) => Promise<unknown>;
  /** Index names, or {@link BY_SEQ}. */
  uses: string[];
  /** Large tables it reads whole on purpose, and why. */
  scans?: { table: string; why: string }[];
  /** Why it may sort the rows it selects (a sort of a bounded set: a root, a page's ids). */
  sorts?: string;
  /** Statements (by their SQL) that may sort, and why; every other statement of the case reads in index order. */
  sortsIn?: { sql: RegExp; why: string };
  /** Statements (by their SQL) whose plan must use a given index. */
  statementUses?: { sql: RegExp; index: string }[];
}

function seedEvent(i: number): Record<string, unknown> {
  const root = `root-${Math.floor(i / 10)}`;
  return {
    event_id: `e-${i}`,
    application_id: i % 3 === 0 ? "app-b" : "app-a",
    user_id: i % 5 === 0 ? null : `user-${i % 4}`,
    ...(i % 2 === 0
      ? { agent_id: `agent-${i % 3}` }
      : { memory_id: `mem-${i % 3}` }),
    thread_id: `thread-${i % 6}`,
    root_trace_id: root,
    parent_event_id: i % 10 === 0 ? null : root,
    turn_id: `turn-${i % 7}`,
    run_id: `run-${i % 8}`,
    kind: i % 10 === 0
      ? "intent"
      : ["retrieval", "llm_call", "tool_call"][i % 3],
    coverage_profile: i % 10 === 0 ? "doc_flow" : null,
    status: i % 9 === 0 ? "error" : "ok",
    tool: i % 3 === 2 ? "search" : null,
    success: i % 4 === 0 ? false : true,
    store: ["trace", "conversation", "tool_log"][i % 3],
    // Half of the events are older than every retention default.
    started_at: new Date(NOW - (i % 2 === 0 ? 400 : 1) * DAY + i * 1000)
      .toISOString(),
    resources: [{ type: "doc", id: `doc-${i % 11}`, role: "retrieved" }],
    selection: i % 4 === 1
      ? {
        candidates: [{
          ref: { type: "doc", id: `doc-${i % 11}` },
          selected: true,
          reason: "mmr_rank",
        }],
      }
      : null,
    outcome: i % 6 === 0
      ? {
        verified: true,
        status: "success",
        artifact: { type: "doc", id: "a" },
      }
      : null,
    preview: i % 2 === 0 ? `preview ${i}` : null,
  };
}

async function seed(db: TraceDb): Promise<void> {
  await initializeObs(db);
  await registerCoverageProfile(db, "doc_flow", {
    required: ["intent", "retrieval"],
  });
  const events = Array.from({ length: 300 }, (_, i) => seedEvent(i));
  await ingestEvents(db, events.slice(0, 150), { now: () => NOW - 200 * DAY });
  await ingestEvents(db, events.slice(150), { now: () => NOW - DAY });
}

const page = (
  name: string,
  query: TraceQuery,
  uses: string[],
  sorts?: string,
): PlanCase => ({
  name: `page: ${name}`,
  run: async (db) => {
    const first = await queryTraceEvents(db, { ...query, limit: 5 });
    // The next page adds the keyset bound to the same plan.
    if (first.next_cursor) {
      await queryTraceEvents(db, {
        ...query,
        limit: 5,
        cursor: first.next_cursor,
      });
    }
  },
  // Every page assesses the coverage of its roots through the root index.
  uses: [...uses, "obs_events_root"],
  ...(sorts ? { sorts } : {}),
});

/** Why a page of a narrow scope may sort: its index selects a few rows, not in time order. */
const NARROW =
  "the index selects the rows of one scope (a root, a turn, an id, a few agents); they are sorted by time";

/** Filters no index narrows: pages read the newest events by time and keep the matching ones. */
const TIME_ORDERED = ["obs_events_time"];

const READ_CASES: PlanCase[] = [
  page("no filter", {}, ["obs_events_time"]),
  page("tenant", { application_id: "app-a" }, ["obs_events_tenant"]),
  page("user", { user_id: "user-1" }, ["obs_events_user"]),
  page("tenant and user", { application_id: "app-a", user_id: "user-1" }, [
    "obs_events_user",
  ]),
  page("tenant, anonymous", { application_id: "app-a", user_id: null }, [
    "obs_events_tenant",
  ]),
  page("anonymous", { user_id: null }, TIME_ORDERED),
  page("one agent", { agent_ids: ["agent-1"] }, ["obs_events_agent"]),
  page("two agents", { agent_ids: ["agent-1", "agent-2"] }, [
    "obs_events_agent",
  ], NARROW),
  page("memory", { memory_ids: ["mem-1"] }, ["obs_events_memory"]),
  page("agent or memory", { agent_ids: ["agent-1"], memory_ids: ["mem-1"] }, [
    "obs_events_agent",
    "obs_events_memory",
  ], NARROW),
  page("thread", { thread_id: "thread-1" }, ["obs_events_thread"]),
  page("root", { root_trace_id: "root-3" }, ["obs_events_root"], NARROW),
  page("run", { run_id: "run-3" }, ["obs_events_run"]),
  page("turn", { turn_id: "turn-3" }, ["obs_events_turn"], NARROW),
  page("exact id", { q: "e-12" }, [
    "obs_events_event_app",
    "obs_events_root",
    "obs_events_turn",
    "obs_events_run",
  ], NARROW),
  // Kinds alone: one stream of the kind index per kind and status, merged in time order.
  page("kinds", { kinds: ["llm_call"] }, ["obs_events_kind_status"]),
  page("two kinds", { kinds: ["llm_call", "tool_call"] }, [
    "obs_events_kind_status",
  ]),
  page("kinds and a status", { kinds: ["retrieval"], statuses: ["error"] }, [
    "obs_events_kind_status",
  ]),
  page("kinds in a wide time range", {
    kinds: ["llm_call"],
    start_time: new Date(NOW - 500 * DAY).toISOString(),
    end_time: new Date(NOW).toISOString(),
  }, ["obs_events_kind_status"]),
  // A column no index orders: the streams stop at the scan floor.
  page("kinds and a tool", { kinds: ["tool_call"], tool: "search" }, [
    "obs_events_kind_status",
    "obs_events_time",
  ]),
  page("five kinds", {
    kinds: ["intent", "retrieval", "llm_call", "tool_call", "other"],
  }, ["obs_events_kind_status"]),
  page(
    "more kinds than the streams merge",
    {
      kinds: ["llm_call", ...Array.from({ length: 16 }, (_, i) => `kind-${i}`)],
    },
    ["obs_events_kind_status"],
    "past MAX_KIND_STREAMS the events of the kinds are sorted by time (README, Serving many clients)",
  ),
  page("statuses", { statuses: ["error"] }, TIME_ORDERED),
  page("tool", { tool: "search" }, TIME_ORDERED),
  page("success", { success: false }, TIME_ORDERED),
  page("store", { store: "conversation" }, TIME_ORDERED),
  page("time range", {
    start_time: new Date(NOW - 500 * DAY).toISOString(),
    end_time: new Date(NOW).toISOString(),
  }, ["obs_events_time"]),
  page("resource with type", { resources: [{ type: "doc", id: "doc-3" }] }, [
    "obs_resources_ref",
  ], NARROW),
  page("resource id only", { resources: [{ id: "doc-3" }] }, [
    "obs_resources_ref",
  ], NARROW),
  {
    name: "finder: kinds and a tool (streams above the scan floor)",
    run: (db) =>
      findTraceRoots(db, {
        filter: { kinds: ["tool_call"], tool: "search" },
        limit: 3,
      }),
    uses: ["obs_events_time", "obs_events_kind_status", "obs_events_root"],
    sortsIn: {
      sql: /WITH r AS MATERIALIZED/,
      why: "as below",
    },
  },
  {
    name: "finder: kinds in a wide time range",
    run: (db) =>
      findTraceRoots(db, {
        filter: {
          kinds: ["llm_call"],
          start_time: new Date(NOW - 500 * DAY).toISOString(),
          end_time: new Date(NOW).toISOString(),
        },
        limit: 3,
      }),
    uses: ["obs_events_kind_status", "obs_events_root"],
    sortsIn: {
      sql: /WITH r AS MATERIALIZED/,
      why:
        "a listed group's kinds, threads and actors (at most MAX_GROUP_COUNT of its events) are ordered for display",
    },
    // With a time range SQLite would rather walk the tenant's events in that range for every group.
    statementUses: [{
      sql: /WITH r AS MATERIALIZED/,
      index: "obs_events_root",
    }],
  },
  {
    name: "finder: a tenant in a time range, next page",
    run: async (db) => {
      const filter = {
        application_id: "app-a",
        start_time: new Date(NOW - 500 * DAY).toISOString(),
        end_time: new Date(NOW).toISOString(),
      };
      const first = await findTraceRoots(db, { filter, limit: 2 });
      assert.ok(first.next_cursor);
      await findTraceRoots(db, { filter, limit: 2, cursor: first.next_cursor });
    },
    uses: ["obs_events_tenant", "obs_events_root"],
    sortsIn: {
      sql: /WITH r AS MATERIALIZED/,
      why: "as above",
    },
    statementUses: [
      { sql: /WITH r AS MATERIALIZED/, index: "obs_events_root" },
      { sql: /SELECT g\.key AS i/, index: "obs_events_root" },
    ],
  },
  {
    name: "overview: kinds only",
    run: (db) => traceOverview(db, { kinds: ["llm_call"] }),
    uses: ["obs_events_kind_status"],
    sortsIn: {
      sql: /GROUP BY agent_id/,
      why:
        "the groups of the newest OVERVIEW_EVENTS events are ordered by their last event",
    },
  },
  {
    name: "summary: tenant",
    run: (db) =>
      summarizeTraceEvents(db, { application_id: "app-a" }, { maxEvents: 20 }),
    uses: ["obs_events_tenant", "obs_events_root"],
    sorts: "groups and kinds of a bounded window are sorted by their counts",
  },
  {
    name: "summary: thread",
    run: (db) =>
      summarizeTraceEvents(db, { thread_id: "thread-2" }, { maxEvents: 20 }),
    uses: ["obs_events_thread"],
    sorts: "groups and kinds of a bounded window are sorted by their counts",
  },
  {
    name: "summary: kinds only (the newest events of the index)",
    run: (db) =>
      summarizeTraceEvents(db, { kinds: ["llm_call"] }, { maxEvents: 20 }),
    uses: ["obs_events_time"],
    sorts: "groups and kinds of a bounded window are sorted by their counts",
  },
  {
    name: "export: every store, oldest first",
    run: (db) => exportEvents(db, { store: "all" }, () => {}),
    uses: ["obs_events_time"],
  },
  {
    name: "export: one tenant",
    run: (db) =>
      exportEvents(
        db,
        { store: "all", scope: { application_id: "app-b" } },
        () => {},
      ),
    uses: ["obs_events_tenant"],
  },
  {
    name: "health: counts, link checks, instrumentation sample, latency probes",
    run: (db) => obsHealth(db, { latencySamples: 1 }),
    uses: [
      "obs_events_event_app",
      "obs_events_time",
      "obs_events_tenant",
      "obs_events_root",
      "obs_events_kind_status",
    ],
    sorts:
      "instrumentation versions of the newest 10,000 events are sorted by their counts",
  },
  {
    name: "parity: every tenant",
    run: (db) => parity(db, { pageSize: 50 }),
    uses: [BY_SEQ],
  },
  {
    name: "parity: one tenant",
    run: (db) => parity(db, { pageSize: 50, applicationId: "app-a" }),
    uses: [BY_SEQ],
  },
  {
    name: "backfill: dry run of one tenant",
    run: (db) => backfill(db, { pageSize: 50, applicationId: "app-a" }),
    uses: [BY_SEQ],
  },
  {
    name: "retention: dry run",
    run: (db) => retention(db, { now: () => NOW }),
    uses: ["obs_events_time"],
  },
  {
    name: "expiry: plan",
    run: (db) => planExpiry(db, { olderThan: NOW - 100 * DAY, now: () => NOW }),
    uses: [],
    scans: [{
      table: "obs_envelopes",
      why:
        "the plan lists the oldest envelopes in seq order, which is receipt order: it stops at its limit",
    }],
  },
  {
    name: "ingest: ownership check of ids already stored",
    // An identical retry is refused by a unique index first, then checked against both tables.
    run: (db) => ingestEvents(db, [seedEvent(3)], { now: () => NOW }),
    uses: ["obs_events_event_app", "sqlite_autoindex_obs_envelopes_1"],
  },
  {
    name:
      "ingest: the stored root of a child that names its parent and no root",
    run: async (db) => {
      const child = {
        ...seedEvent(301),
        event_id: "child-of-e-1",
        root_trace_id: undefined,
        parent_event_id: "e-1",
      };
      const written = await ingestEvents(db, [child], { now: () => NOW });
      assert.equal(written.inserted, 1);
    },
    // One statement reads both tables: each half by its own index.
    statementUses: [
      {
        sql: /FROM obs_events\s+WHERE application_id = \?1 AND event_id IN/,
        index: "obs_events_event_app",
      },
      {
        sql: /FROM obs_envelopes\s+WHERE application_id = \?1 AND event_id IN/,
        index: "sqlite_autoindex_obs_envelopes_1",
      },
    ],
    uses: ["obs_events_event_app", "sqlite_autoindex_obs_envelopes_1"],
  },
];

const ERASURE_KEY = new Uint8Array(32);
const ERASURE_SORT =
  "the subject's events, found in index rows and in envelopes, are merged by seq";

/** The dry run of erasing `subject`: its events found in the index rows and, apart, in the envelopes. */
const erasure = (
  name: string,
  subject: ErasureSubjectInput,
  index: string,
): PlanCase => ({
  name: `erasure: ${name}`,
  run: (db) =>
    planErasure(db, parseErasureSubject(subject), { key: ERASURE_KEY }),
  // Envelopes are matched on their body within the tenant's envelopes.
  uses: [index, "sqlite_autoindex_obs_envelopes_1", BY_SEQ],
  sorts: ERASURE_SORT,
});

const ERASURE_CASES: PlanCase[] = [
  erasure(
    "user",
    { application_id: "app-a", user_id: "user-1" },
    "obs_events_user",
  ),
  erasure(
    "anonymous",
    { application_id: "app-a", anonymous: true },
    "obs_events_tenant",
  ),
  erasure(
    "thread",
    { application_id: "app-a", thread_id: "thread-1" },
    "obs_events_thread",
  ),
  erasure(
    "memory",
    { application_id: "app-a", memory_id: "mem-1" },
    "obs_events_memory",
  ),
  erasure(
    "event ids",
    { application_id: "app-a", event_ids: ["e-1", "e-2"] },
    "obs_events_event_app",
  ),
];

/** Cases that change the index, run after the read cases. */
const WRITE_CASES: PlanCase[] = [
  {
    name:
      "self staging inventory: the application's envelopes in id order, slice by slice",
    run: async (db) => {
      const adapter = createSelfStagingAdapter(db, {
        key: new Uint8Array(32),
        inventoryScan: { bound: 100, slice: 2 },
      });
      for (const id of ["d1", "d2", "d3"]) {
        await adapter.handle("ingest", { namespace: "ns", id, text: id });
      }
      const { response } = await adapter.handle("inventory", {
        namespace: "ns",
      });
      assert.equal(response.source_records, 3);
    },
    uses: [
      "sqlite_autoindex_obs_envelopes_1",
      "obs_events_thread",
      BY_SEQ,
    ],
    statementUses: [{
      sql: /json_group_array\(seq\) FILTER/,
      index: "sqlite_autoindex_obs_envelopes_1",
    }],
  },
  {
    name: "erasure: apply to a user",
    run: (db) =>
      eraseNow(
        db,
        parseErasureSubject({ application_id: "app-a", user_id: "user-2" }),
        { key: ERASURE_KEY, reclaim: false },
      ),
    uses: ["obs_events_user", BY_SEQ],
    sorts: ERASURE_SORT,
  },
  {
    name: "ingest: tombstone check of an id the erasure above removed",
    run: async (db) => {
      const resent = await ingestEvents(db, [seedEvent(2)], { now: () => NOW });
      assert.equal(resent.duplicates, 1);
    },
    uses: [BY_PRIMARY_KEY],
  },
  {
    name: "erasure: apply to a user, marking the events whose parent it erases",
    run: (db) =>
      eraseNow(
        db,
        parseErasureSubject({ application_id: "app-a", user_id: "user-3" }),
        {
          key: ERASURE_KEY,
          reclaim: false,
          markParentLinks: true,
        },
      ),
    uses: ["obs_events_user", "obs_events_root", BY_SEQ],
    sorts: ERASURE_SORT,
  },
  {
    name: "erasure: content of a user, its preview digests redacted",
    run: async (db) => {
      const erased = await eraseNow(
        db,
        parseErasureSubject({ application_id: "app-a", user_id: "user-0" }),
        { key: ERASURE_KEY, scope: "content", reclaim: false },
      );
      assert.ok(erased.tables.preview_digests > 0);
    },
    uses: ["obs_events_user", BY_SEQ],
    sorts: ERASURE_SORT,
  },
  {
    name: "backfill: rebuild a missing index row",
    run: async (db) => {
      await db.client.batch([
        "DELETE FROM obs_resources WHERE seq = 2",
        "DELETE FROM obs_previews WHERE seq = 2",
        "DELETE FROM obs_events WHERE seq = 2",
      ], "write");
      const result = await backfill(db, { dryRun: false, pageSize: 50 });
      assert.equal(result.written, 1);
    },
    uses: ["obs_events_event_app", BY_SEQ],
  },
  {
    name: "retention: apply",
    run: (db) =>
      retention(db, { now: () => NOW, dryRun: false, reclaim: false }),
    uses: ["obs_events_time", BY_SEQ],
  },
  {
    name: "expiry: apply",
    run: async (db) => {
      const plan = await planExpiry(db, {
        olderThan: NOW - 100 * DAY,
        now: () => NOW,
      });
      assert.ok(plan.entries.length > 0);
      await applyExpiry(db, plan, plan.confirmation, () => true, {
        now: () => NOW,
      });
    },
    uses: [BY_SEQ],
    scans: [{ table: "obs_envelopes", why: "as the plan above" }],
  },
];

/**
 * `EXPLAIN QUERY PLAN` of each statement touching a large table (inserts of
 * plain values have none to check), on a connection of its own: the client
 * leaves an explained statement open, which would lock the tables of the
 * connection the index uses.
 */
async function plansOf(
  db: TraceDb,
  statements: readonly RecordedStatement[],
): Promise<{ sql: string; lines: string[] }[]> {
  const explain = createClient({ url: db.url });
  try {
    return await explainAll(explain, statements);
  } finally {
    explain.close();
  }
}

async function explainAll(
  client: Client,
  statements: readonly RecordedStatement[],
): Promise<{ sql: string; lines: string[] }[]> {
  const plans = [];
  for (const statement of statements) {
    const sql = statement.sql.trim();
    if (!LARGE_TABLES.some((table) => sql.includes(table))) continue;
    if (
      /^INSERT\b[\s\S]*\bVALUES\s*\(/i.test(sql) && !/\bSELECT\b/i.test(sql)
    ) continue;
    const result = await client.execute({
      sql: `EXPLAIN QUERY PLAN ${sql}`,
      args: statement.args,
    });
    plans.push({ sql, lines: result.rows.map((row) => String(row.detail)) });
  }
  return plans;
}

/** Names in `sql` that stand for a large table: the table itself and its aliases. */
function largeTableNames(sql: string): Map<string, string> {
  const names = new Map<string, string>(LARGE_TABLES.map((t) => [t, t]));
  const alias = new RegExp(
    `\\b(${
      LARGE_TABLES.join("|")
    })\\s+(?:AS\\s+)?(?!WHERE|ORDER|LIMIT|ON|JOIN|LEFT|INNER|GROUP|USING|INDEXED|UNION|SET|VALUES)([a-z]\\w*)`,
    "gi",
  );
  for (const match of sql.matchAll(alias)) names.set(match[2]!, match[1]!);
  return names;
}

/** Whole-table scans of large tables in one plan (an index scan or a subquery's result is not one). */
function fullScans(plan: { sql: string; lines: string[] }): string[] {
  const names = largeTableNames(plan.sql);
  const subqueries = new Set(
    plan.lines.flatMap((line) =>
      /^(?:CO-ROUTINE|MATERIALIZE) (\S+)/.exec(line)?.[1] ?? []
    ),
  );
  return plan.lines.flatMap((line) => {
    const scanned = /^SCAN (\S+)$/.exec(line)?.[1];
    if (!scanned || subqueries.has(scanned)) return [];
    const table = names.get(scanned);
    return table ? [table] : [];
  });
}

async function checkCase(base: TraceDb, planCase: PlanCase): Promise<void> {
  const { db, client } = recordingDb(base);
  await planCase.run(db);
  const plans = await plansOf(base, client.statements);
  assert.ok(
    plans.length > 0,
    `${planCase.name}: no statement touched the index`,
  );
  const text = plans.flatMap((plan) => plan.lines).join("\n");
  for (const index of planCase.uses) {
    const used = index === BY_SEQ
      ? /USING INTEGER PRIMARY KEY/
      : index === BY_PRIMARY_KEY
      ? /USING PRIMARY KEY/
      : new RegExp(`USING (?:COVERING )?INDEX ${index}\\b`);
    assert.match(
      text,
      used,
      `${planCase.name}: no plan uses ${index}\n${text}`,
    );
  }
  for (const { sql, index } of planCase.statementUses ?? []) {
    const matching = plans.filter((plan) => sql.test(plan.sql));
    assert.ok(matching.length > 0, `${planCase.name}: no statement ${sql}`);
    for (const plan of matching) {
      assert.match(
        plan.lines.join("\n"),
        new RegExp(`USING (?:COVERING )?INDEX ${index}\\b`),
        `${planCase.name}: ${sql} does not use ${index}\n${
          plan.lines.join("\n")
        }`,
      );
    }
  }
  if (!planCase.sorts) {
    const sorted = plans.filter((plan) =>
      plan.lines.includes("USE TEMP B-TREE FOR ORDER BY") &&
      !planCase.sortsIn?.sql.test(plan.sql)
    );
    assert.deepEqual(
      sorted.map((plan) => plan.sql),
      [],
      `${planCase.name}: sorts what it selects instead of reading an index in order`,
    );
  }
  const allowed = new Set(planCase.scans?.map((scan) => scan.table) ?? []);
  for (const plan of plans) {
    const scans = fullScans(plan).filter((table) => !allowed.has(table));
    assert.deepEqual(
      scans,
      [],
      `${planCase.name}: scans ${scans.join(", ")} whole\n${plan.sql}\n${
        plan.lines.join("\n")
      }`,
    );
  }
}

Deno.test("every query path of the index uses its index", async (t) => {
  await withDb(async (db) => {
    await seed(db);
    for (const planCase of [...READ_CASES, ...ERASURE_CASES, ...WRITE_CASES]) {
      await t.step(planCase.name, () => checkCase(db, planCase));
    }
  });
});

Deno.test("the plan check notices a path that lost its index or sorts a whole table", async () => {
  await withDb(async (db) => {
    await seed(db);
    await db.client.execute("DROP INDEX obs_events_thread");
    await assert.rejects(
      checkCase(
        db,
        page("thread", { thread_id: "thread-1" }, ["obs_events_thread"]),
      ),
      /no plan uses obs_events_thread/,
    );
    await db.client.execute("DROP INDEX obs_resources_ref");
    await assert.rejects(
      checkCase(
        db,
        page("resource", { resources: [{ id: "doc-3" }] }, [], NARROW),
      ),
      /scans obs_resources whole/,
    );
    // A tenant's pages in key order through the tenant's index: every page sorts the tenant.
    await assert.rejects(
      checkCase(db, {
        name: "tenant pages by seq",
        run: (db) =>
          db.client.execute(
            "SELECT seq FROM obs_envelopes WHERE seq > 0 AND application_id = 'app-a' ORDER BY seq LIMIT 5",
          ),
        uses: [],
      }),
      /sorts what it selects/,
    );
  });
});

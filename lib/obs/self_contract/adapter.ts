/**
 * Trace's own index behind the staging adapter contract, so the deletion
 * contract Trace runs against others can be run against Trace itself:
 *
 * - `/ingest` writes one event of the adapter's application (namespace =
 *   thread, document id = event id) whose preview is the document's text;
 * - `/query` searches the namespace's previews for the query text;
 * - `/inventory` counts, for the namespace, source envelopes
 *   (`source_records`), index rows (`vector_records`) and previews
 *   (`cache_records`), attributing a preview through its index row or its
 *   envelope; `complete` is true only when every count was enumerated to
 *   its end (none reached the bound, and the search of the application's
 *   envelopes, in slices that let other requests through, finished within
 *   {@link INVENTORY_SCAN_BOUND});
 * - `/delete` erases the supplied ids of the namespace through the erasure
 *   path (`lib/obs/maint/erasure.ts`), as an operator's erasure would.
 *
 * A deliberately defective variant (`skipPreviews`) erases every table but
 * the previews; since an index row is only removed together with its
 * previews, the rows stay too, and the contract must find the marker.
 *
 * @module
 */

import {
  type Operation,
  type OperationRequests,
  type OperationResponses,
  parseRequest,
} from "../../contract/protocol.ts";
import type { TraceDb } from "../../db.ts";
import { ingestEvents } from "../ingest/mod.ts";
import {
  eraseNow,
  ERASURE_TABLES,
  type ErasureSubject,
  type ErasureTable,
} from "../maint/mod.ts";
import { readStatement } from "../query/mod.ts";
import { requireObs } from "../schema.ts";

/** The application the adapter writes its events under. */
export const SELF_STAGING_APPLICATION = "trace-staging-self";
/** The agent its events name. */
export const SELF_STAGING_AGENT = "trace-staging-adapter";
/** The answer when no preview of the namespace holds the query text. */
export const SELF_NO_MATCH = "No stored preview matches this query";

/** Most rows one inventory count enumerates before it answers `complete: false`. */
export const INVENTORY_BOUND = 100_000;
/**
 * Most envelopes of the adapter's application one inventory reads to find a
 * namespace's (envelopes carry their thread in their body only): past it the
 * inventory answers `complete: false` rather than hold the server.
 */
export const INVENTORY_SCAN_BOUND = 200_000;
const DEFAULT_INVENTORY_SCAN: InventoryScan = {
  bound: INVENTORY_SCAN_BOUND,
  // Envelopes per statement: the server answers others between statements.
  slice: 5_000,
};
const MAX_QUERY_MATCHES = 20;

/** How the adapter erases: the index's erasure by default, or one that also keeps a receipt. */
export type SelfErase = (
  subject: ErasureSubject,
  options: { tables: readonly ErasureTable[] },
) => Promise<void>;

/** Options for {@link createSelfStagingAdapter}. */
export interface SelfStagingOptions {
  /** The erasure key (subjects appear only as its digest). */
  key: Uint8Array;
  /** Replaces the default erasure (e.g. with one that appends a receipt). */
  erase?: SelfErase;
  /** The defective variant: its erasure skips the previews table. */
  skipPreviews?: boolean;
  /** Return freed pages and truncate the WAL after each deletion (default true). */
  reclaim?: boolean;
  /**
   * How an inventory searches the application's envelopes: at most `bound`
   * before it answers `complete: false`, `slice` per statement (default
   * {@link INVENTORY_SCAN_BOUND} in slices of 5,000).
   */
  inventoryScan?: { bound: number; slice: number };
}

/** Bounds of an inventory's search of the application's envelopes. */
export type InventoryScan = NonNullable<SelfStagingOptions["inventoryScan"]>;

/** One answered request: the checked body and the answer. */
export interface SelfStagingExchange<K extends Operation = Operation> {
  /** The request body, checked against the contract. */
  request: OperationRequests[K];
  /** The answer. */
  response: OperationResponses[K];
}

/** What the index physically holds for a namespace, whatever an inventory says. */
export interface SelfStoredCounts {
  /** Source envelopes of the namespace's events. */
  source_records: number;
  /** Index rows of the namespace. */
  vector_records: number;
  /** Stored previews of those events. */
  cache_records: number;
}

/** The staging adapter over the index. */
export interface SelfStagingAdapter {
  /** Answers one operation; throws `StagingRequestError` for a body the contract refuses. */
  handle<K extends Operation>(
    op: K,
    body: unknown,
  ): Promise<SelfStagingExchange<K>>;
  /** Unbounded counts for a namespace (tests and the reference suite). */
  storedCounts(namespace: string): Promise<SelfStoredCounts>;
}

const APP = SELF_STAGING_APPLICATION;

/** `body`'s thread id as text, or NULL when the body is not JSON. */
const BODY_THREAD =
  "(CASE WHEN json_valid(body) THEN json_extract(body, '$.event.thread_id') END)";

const NAMESPACE_SEQS =
  `SELECT seq FROM obs_events WHERE application_id = ?1 AND thread_id = ?2
  UNION SELECT seq FROM obs_envelopes WHERE application_id = ?1 AND ${BODY_THREAD} = ?2`;

const COUNTS = {
  source_records:
    `SELECT 1 FROM obs_envelopes WHERE application_id = ?1 AND ${BODY_THREAD} = ?2`,
  vector_records:
    "SELECT 1 FROM obs_events WHERE application_id = ?1 AND thread_id = ?2",
  cache_records: `SELECT 1 FROM obs_previews WHERE seq IN (${NAMESPACE_SEQS})`,
} as const;

/** Builds the adapter over `db` (the observability tables must exist). */
export function createSelfStagingAdapter(
  db: TraceDb,
  options: SelfStagingOptions,
): SelfStagingAdapter {
  const tables = options.skipPreviews
    ? ERASURE_TABLES.filter((t) => t !== "obs_previews")
    : ERASURE_TABLES;
  const erase: SelfErase = options.erase ??
    (async (subject, o) => {
      await eraseNow(db, subject, {
        key: options.key,
        tables: o.tables,
        reclaim: options.reclaim ?? true,
      });
    });
  const answers: {
    [K in Operation]: (
      r: OperationRequests[K],
    ) => Promise<OperationResponses[K]>;
  } = {
    ingest: (r) => ingest(db, r),
    query: (r) => query(db, r),
    inventory: (r) =>
      inventory(
        db,
        r.namespace,
        options.inventoryScan ?? DEFAULT_INVENTORY_SCAN,
      ),
    delete: async (r) => {
      const ids = await idsInNamespace(db, r.namespace, r.ids);
      if (ids.length > 0) {
        await erase({ application_id: APP, kind: "events", ids }, { tables });
      }
      return { acknowledged: true };
    },
  };
  return {
    async handle(op, body) {
      const request = parseRequest(op, body);
      await requireObs(db);
      const answer = answers[op] as (
        r: typeof request,
      ) => Promise<OperationResponses[typeof op]>;
      return { request, response: await answer(request) };
    },
    storedCounts: (namespace) => counts(db, namespace),
  };
}

async function ingest(
  db: TraceDb,
  r: OperationRequests["ingest"],
): Promise<OperationResponses["ingest"]> {
  await ingestEvents(db, [{
    event_id: r.id,
    application_id: APP,
    agent_id: SELF_STAGING_AGENT,
    thread_id: r.namespace,
    kind: "memory_write",
    status: "ok",
    success: true,
    store: "conversation",
    resources: [{ type: "document", id: r.id, role: "written" }],
    preview: r.text,
  }], { source: "api" });
  return { id: r.id };
}

async function query(
  db: TraceDb,
  r: OperationRequests["query"],
): Promise<OperationResponses["query"]> {
  const result = await db.client.execute({
    sql:
      `SELECT p.content FROM obs_previews p JOIN obs_events e ON e.seq = p.seq
          WHERE e.application_id = ? AND e.thread_id = ? AND instr(p.content, ?) > 0
          ORDER BY e.seq LIMIT ?`,
    args: [APP, r.namespace, r.query, MAX_QUERY_MATCHES],
  });
  const texts = result.rows.map((row) => String(row.content));
  return { text: texts.length > 0 ? texts.join("\n\n") : SELF_NO_MATCH };
}

async function inventory(
  db: TraceDb,
  namespace: string,
  scan: InventoryScan,
): Promise<OperationResponses["inventory"]> {
  const envelopes = await namespaceEnvelopes(db, namespace, scan);
  const result = await readStatement(db, {
    sql: `SELECT
      (SELECT COUNT(*) FROM (SELECT 1 FROM obs_events
        WHERE application_id = ?1 AND thread_id = ?2 LIMIT ?4)) AS vector,
      (SELECT COUNT(*) FROM (SELECT 1 FROM obs_previews WHERE seq IN (
        SELECT seq FROM obs_events WHERE application_id = ?1 AND thread_id = ?2
        UNION SELECT value FROM json_each(?3)) LIMIT ?4)) AS cache`,
    args: [APP, namespace, JSON.stringify(envelopes.seqs), INVENTORY_BOUND + 1],
  });
  const row = result.rows[0];
  const found = {
    source_records: envelopes.seqs.length,
    vector_records: Number(row?.vector ?? 0),
    cache_records: Number(row?.cache ?? 0),
  };
  const complete = envelopes.finished &&
    Object.values(found).every((n) => n <= INVENTORY_BOUND);
  return { complete, ...found };
}

/**
 * The `seq`s of the namespace's envelopes (up to one past
 * {@link INVENTORY_BOUND}), read through the application's envelopes in
 * id order, `scan.slice` per statement; `finished` is false when
 * `scan.bound` envelopes were read before the end.
 */
async function namespaceEnvelopes(
  db: TraceDb,
  namespace: string,
  scan: InventoryScan,
): Promise<{ seqs: number[]; finished: boolean }> {
  const seqs: number[] = [];
  let after = "";
  for (let read = 0; read < scan.bound; read += scan.slice) {
    const result = await readStatement(db, {
      sql: `SELECT COUNT(*) AS n, MAX(event_id) AS last,
          json_group_array(seq) FILTER (WHERE thread = ?2) AS seqs
        FROM (SELECT seq, event_id, ${BODY_THREAD} AS thread FROM obs_envelopes
          WHERE application_id = ?1 AND event_id > ?3
          ORDER BY event_id LIMIT ?4)`,
      args: [APP, namespace, after, scan.slice],
    });
    const row = result.rows[0];
    seqs.push(...JSON.parse(String(row?.seqs ?? "[]")) as number[]);
    if (seqs.length > INVENTORY_BOUND || Number(row?.n ?? 0) < scan.slice) {
      return { seqs, finished: true };
    }
    after = String(row?.last);
  }
  return { seqs, finished: false };
}

/** Counts per store, each enumerated to its end (tests and the reference suite). */
async function counts(
  db: TraceDb,
  namespace: string,
): Promise<SelfStoredCounts> {
  const results = await db.client.batch(
    Object.values(COUNTS).map((sql) => ({
      sql: `SELECT COUNT(*) AS n FROM (${sql})`,
      args: [APP, namespace],
    })),
    "read",
  );
  const [source, vector, cache] = results.map((r) => Number(r.rows[0]?.n ?? 0));
  return {
    source_records: source!,
    vector_records: vector!,
    cache_records: cache!,
  };
}

/** The ids among `ids` that are stored in `namespace` (the contract deletes only those). */
async function idsInNamespace(
  db: TraceDb,
  namespace: string,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const list = JSON.stringify([...new Set(ids)]);
  const result = await db.client.execute({
    sql: `SELECT event_id FROM obs_events
            WHERE application_id = ?1 AND thread_id = ?2
              AND event_id IN (SELECT value FROM json_each(?3))
          UNION
          SELECT event_id FROM obs_envelopes
            WHERE application_id = ?1 AND ${BODY_THREAD} = ?2
              AND event_id IN (SELECT value FROM json_each(?3))`,
    args: [APP, namespace, list],
  });
  return result.rows.map((row) => String(row.event_id)).sort();
}

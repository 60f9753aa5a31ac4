/**
 * Trace's own index behind the staging adapter contract, so the deletion
 * contract Trace runs against others can be run against Trace itself:
 *
 * - `/ingest` writes one event of the adapter's application whose thread is
 *   the namespace, whose resource is the document (type `document`, the
 *   supplied id) and whose preview is the document's text. Its event id is
 *   {@link selfStagingEventId} of namespace and id, so the same id in two
 *   namespaces is two records: namespaces never see, count, refuse or erase
 *   each other's documents. An identical retry is a duplicate (success); a
 *   changed text under an id of the namespace is refused (409);
 * - `/query` searches the namespace's previews for the query text;
 * - `/inventory` counts, for the namespace, source envelopes
 *   (`source_records`), index rows (`vector_records`) and previews
 *   (`cache_records`), attributing a preview through its index row or its
 *   envelope; `complete` is true only when every count was enumerated to
 *   its end (none reached the bound, and the search of the application's
 *   envelopes, in slices that let other requests through, finished within
 *   {@link INVENTORY_SCAN_BOUND});
 * - `/delete` erases the events of the supplied ids of the namespace (each
 *   event's thread and document id checked) through the erasure path
 *   (`lib/obs/maint/erasure.ts`), as an operator's erasure would, but
 *   without tombstones, so a deleted document can be written again under
 *   its id. Events an earlier version wrote under the bare id as event id
 *   are found too.
 *
 * A deliberately defective variant (`skipPreviews`) erases every table but
 * the previews; since an index row is only removed together with its
 * previews, the rows stay too, and the contract must find the marker.
 *
 * @module
 */

import { digestOf } from "../../canonical_json.ts";
import {
  type Operation,
  type OperationRequests,
  type OperationResponses,
  parseRequest,
} from "../../contract/protocol.ts";
import type { TraceDb } from "../../db.ts";
import { quoteValue } from "../../echo.ts";
import { IngestConflictError, ingestEvents } from "../ingest/mod.ts";
import {
  eraseNow,
  ERASURE_TABLES,
  type ErasureSubject,
  type ErasureTable,
} from "../maint/mod.ts";
import { LIMITS } from "../mod.ts";
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

/**
 * How the adapter erases: the index's erasure by default, or one that also
 * keeps a receipt. Either erases without tombstones (`tombstones: false`):
 * a deleted document may be written again under its id, as in any store,
 * and an acknowledged ingest must be visible (a tombstone would answer it
 * as a duplicate).
 */
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

/**
 * The event id the adapter stores document `id` of `namespace` under:
 * `<length of namespace>:<namespace>/<id>` (the length, in UTF-16 code
 * units, says where the namespace ends, so no two pairs share one), or, when
 * that is longer than an event id may be, `sha256:` and the digest of the
 * pair, a form no length-prefixed id takes (it starts with a letter).
 */
export function selfStagingEventId(namespace: string, id: string): string {
  const plain = `${namespace.length}:${namespace}/${id}`;
  return plain.length <= LIMITS.idChars ? plain : digestOf([namespace, id]);
}

/** `body`'s thread id as text, or NULL when the body is not JSON. */
const BODY_THREAD =
  "(CASE WHEN json_valid(body) THEN json_extract(body, '$.event.thread_id') END)";
/** `body`'s document id (its first resource's) as text, or NULL when the body is not JSON. */
const BODY_DOCUMENT =
  "(CASE WHEN json_valid(body) THEN json_extract(body, '$.event.resources[0].id') END)";
/**
 * An index row's document id, from its own `meta` (an erasure that skips the
 * previews keeps the row but not its resource refs).
 */
const META_DOCUMENT =
  "(CASE WHEN json_valid(meta) THEN json_extract(meta, '$.resources[0].id') END)";

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
        tombstones: false,
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
      const ids = await eventIdsInNamespace(db, r.namespace, r.ids);
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
  const eventId = selfStagingEventId(r.namespace, r.id);
  try {
    await ingestEvents(db, [{
      event_id: eventId,
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
  } catch (error) {
    if (!(error instanceof IngestConflictError)) throw error;
    // A changed text under an id of the namespace: the refusal names the
    // supplied id, not the event id it is stored under.
    throw new IngestConflictError(error.items.map((item) => ({
      ...item,
      message: item.message.replaceAll(quoteValue(eventId), quoteValue(r.id)),
    })));
  }
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

/**
 * The event ids of the documents `ids` of `namespace` (the contract deletes
 * only those): each id's {@link selfStagingEventId}, and the bare id an
 * earlier version stored a document under, each kept only when the event's
 * thread is the namespace and its document id is the id, so no other
 * document is ever reached.
 */
async function eventIdsInNamespace(
  db: TraceDb,
  namespace: string,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const wanted = new Map<string, Set<string>>();
  for (const id of ids) {
    for (const eventId of [selfStagingEventId(namespace, id), id]) {
      wanted.set(eventId, (wanted.get(eventId) ?? new Set()).add(id));
    }
  }
  const result = await db.client.execute({
    sql: `SELECT event_id, ${META_DOCUMENT} AS document FROM obs_events
            WHERE application_id = ?1 AND thread_id = ?2
              AND event_id IN (SELECT value FROM json_each(?3))
          UNION
          SELECT event_id, ${BODY_DOCUMENT} FROM obs_envelopes
            WHERE application_id = ?1 AND ${BODY_THREAD} = ?2
              AND event_id IN (SELECT value FROM json_each(?3))`,
    args: [APP, namespace, JSON.stringify([...wanted.keys()])],
  });
  const found = new Set<string>();
  for (const row of result.rows) {
    const eventId = String(row.event_id);
    const document = row.document;
    if (typeof document === "string" && wanted.get(eventId)?.has(document)) {
      found.add(eventId);
    }
  }
  return [...found].sort();
}

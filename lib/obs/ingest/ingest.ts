/**
 * Batch ingest. A batch is all-or-nothing: every item is validated first and
 * any refused item refuses the batch, with one issue per item. The canonical
 * envelope and its index rows are written in one transaction (dual-write).
 * The first writer owns a tenant-scoped `event_id`: an identical retry is a
 * no-op that keeps the original row and timestamp, a changed payload under the
 * same id refuses the batch.
 *
 * @module
 */

import type { InStatement, Transaction } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import {
  ConfigError,
  ConflictError,
  errorMessage,
  StorageError,
} from "../../errors.ts";
import {
  chunkedInsert,
  indexStatements,
  previewStatements,
} from "./index_rows.ts";
import {
  describeEventIssue,
  type EventIssue,
  type NormalizedEvent,
  normalizeEvent,
} from "../normalize.ts";
import { requireObs } from "../schema.ts";
import { incrementCounter } from "../counters.ts";
import { notifyIngested } from "../ingest_observers.ts";
import {
  BatchTooLargeError,
  MAX_BATCH_EVENTS,
  MAX_REPORTED_ISSUES,
} from "../batch.ts";

export { MAX_BATCH_EVENTS };

/** Ingest paths, recorded on each envelope. */
export const INGEST_SOURCES = [
  "api",
  "otlp",
  "recorder",
  "cli",
  "import",
] as const;
/** One of {@link INGEST_SOURCES}. */
export type IngestSource = typeof INGEST_SOURCES[number];

/** Where the items of a batch came from, for messages. */
export interface BatchOrigin {
  /** 1-based source line of each input (NDJSON); issues then name lines, not items. */
  lines?: readonly number[];
}

/** Options for {@link ingestEvents}. */
export interface IngestOptions extends BatchOrigin {
  /** Which path the batch arrived by (default `api`). */
  source?: IngestSource;
  /** Clock for `received_at`, in epoch ms (tests pin it). */
  now?: () => number;
}

/** What happened to one item of an accepted batch. */
export interface IngestItemResult {
  index: number;
  event_id: string;
  seq: number;
  /** True for an identical retry (or a repeat within the batch): nothing was written. */
  duplicate: boolean;
}

/** Result of an accepted batch. */
export interface IngestResult {
  inserted: number;
  duplicates: number;
  items: IngestItemResult[];
}

/** A batch refused because items failed validation; nothing was written. */
export class IngestBatchError extends ConfigError {
  /** The refused items (at most {@link MAX_REPORTED_ISSUES}), each with index, field and message. */
  readonly items: EventIssue[];
  /** How many items were refused in total. */
  readonly refused: number;
  /** Refused items counted but not listed in {@link items}. */
  readonly unlisted: number;

  /**
   * `issues` may be cut short already (decoders stop collecting at the
   * bound); `refused` is then the full count (default: `issues.length`).
   */
  constructor(issues: EventIssue[], total: number, refused = issues.length) {
    const first = issues[0];
    const where = first ? describeEventIssue(first) : "empty";
    const items = issues.slice(0, MAX_REPORTED_ISSUES);
    const unlisted = refused - items.length;
    super(
      `Cannot ingest the batch: ${refused} of ${total} events refused (${where}${
        unlisted > 0
          ? `; ${items.length} listed, ${unlisted} more not listed`
          : ""
      }); fix them and resend the whole batch`,
    );
    this.name = "IngestBatchError";
    this.items = items;
    this.refused = refused;
    this.unlisted = unlisted;
  }
}

/** A batch refused because an event id is already owned by a different payload. */
export class IngestConflictError extends ConflictError {
  /** The conflicting items (at most 100). */
  readonly items: EventIssue[];

  constructor(issues: EventIssue[]) {
    const first = issues[0];
    super(
      `Cannot ingest the batch: ${
        first ? describeEventIssue(first) : "conflict"
      }; a changed observation needs a new event_id`,
    );
    this.name = "IngestConflictError";
    this.items = issues.slice(0, MAX_REPORTED_ISSUES);
  }
}

/** Validates `inputs` and writes them all, or nothing. */
export async function ingestEvents(
  db: TraceDb,
  inputs: readonly unknown[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  if (inputs.length > MAX_BATCH_EVENTS) {
    throw new BatchTooLargeError(
      `Cannot ingest the batch: ${inputs.length} events exceed the limit of ${MAX_BATCH_EVENTS}; send smaller batches`,
      MAX_BATCH_EVENTS,
    );
  }
  await requireObs(db);
  const events = validateEventBatch(inputs, options);
  if (events.length === 0) return { inserted: 0, duplicates: 0, items: [] };
  const receivedAt = (options.now ?? Date.now)();
  let tx: Transaction | undefined;
  try {
    tx = await db.client.transaction("write");
    const result = await writeBatch(
      tx,
      events,
      receivedAt,
      options.source ?? "api",
      options.lines,
    );
    await tx.commit();
    incrementCounter("events_written", result.inserted);
    incrementCounter("duplicate_retries", result.duplicates);
    incrementCounter(
      "previews_truncated",
      events.filter((e) => e.preview?.truncated).length,
    );
    await notifyIngested(db, events, result.items);
    return result;
  } catch (error) {
    if (error instanceof IngestConflictError) {
      incrementCounter("batches_refused");
      throw error;
    }
    incrementCounter("write_failures");
    // Detailed for local callers; the server answers storage errors generically.
    throw new StorageError(
      `Cannot write trace events: ${errorMessage(error)}`,
      { cause: error },
    );
  } finally {
    tx?.close();
  }
}

/** Validates every input without writing; throws {@link IngestBatchError} naming each refused item. */
export function validateEventBatch(
  inputs: readonly unknown[],
  origin: BatchOrigin = {},
): NormalizedEvent[] {
  const events: NormalizedEvent[] = [];
  const issues: EventIssue[] = [];
  let refused = 0;
  inputs.forEach((input, index) => {
    const result = normalizeEvent(input, index);
    if ("fingerprint" in result) events.push(result);
    else if (++refused <= MAX_REPORTED_ISSUES) {
      issues.push(withLine(result, origin.lines));
    }
  });
  if (refused > 0) {
    incrementCounter("batches_refused");
    throw new IngestBatchError(issues, inputs.length, refused);
  }
  return events;
}

function withLine(
  issue: EventIssue,
  lines: readonly number[] | undefined,
): EventIssue {
  const line = lines?.[issue.index];
  return line === undefined ? issue : { ...issue, line };
}

interface Owned {
  seq: number;
  fingerprint: string;
  /** Index of the item of this batch that claimed the id; absent when stored earlier. */
  item?: number;
}

const keyOf = (applicationId: string, eventId: string) =>
  `${applicationId}\u0000${eventId}`;

async function writeBatch(
  tx: Transaction,
  events: NormalizedEvent[],
  receivedAt: number,
  source: string,
  lines: readonly number[] | undefined,
): Promise<IngestResult> {
  const owned = await loadOwned(tx, events);
  const conflicts: EventIssue[] = [];
  const fresh: { index: number; event: NormalizedEvent }[] = [];
  const items: IngestItemResult[] = [];
  let seq = await nextSeq(tx);
  events.forEach((event, index) => {
    const key = keyOf(event.meta.application_id, event.meta.event_id);
    const prior = owned.get(key);
    if (prior && prior.fingerprint !== event.fingerprint) {
      conflicts.push(withLine(conflict(event, index, prior, lines), lines));
      return;
    }
    if (prior) {
      items.push({
        index,
        event_id: event.meta.event_id,
        seq: prior.seq,
        duplicate: true,
      });
      return;
    }
    owned.set(key, { seq, fingerprint: event.fingerprint, item: index });
    fresh.push({ index, event });
    items.push({ index, event_id: event.meta.event_id, seq, duplicate: false });
    seq += 1;
  });
  if (conflicts.length > 0) throw new IngestConflictError(conflicts);
  if (fresh.length > 0) {
    await tx.batch(insertStatements(fresh, items, receivedAt, source, seq));
  }
  return {
    inserted: fresh.length,
    duplicates: items.length - fresh.length,
    items,
  };
}

function conflict(
  event: NormalizedEvent,
  index: number,
  prior: Owned,
  lines: readonly number[] | undefined,
): EventIssue {
  const id = `"${event.meta.event_id}"`;
  if (prior.item === undefined) {
    return {
      index,
      field: "event_id",
      message: `${id} is already stored with a different payload`,
    };
  }
  const first = lines?.[prior.item];
  const second = lines?.[index];
  const pair = first !== undefined && second !== undefined
    ? `lines ${first} and ${second}`
    : `items ${prior.item} and ${index}`;
  return {
    index,
    field: "event_id",
    message:
      `${id} is repeated in this batch with a different payload (${pair})`,
  };
}

function insertStatements(
  fresh: { index: number; event: NormalizedEvent }[],
  items: IngestItemResult[],
  receivedAt: number,
  source: string,
  nextSeqValue: number,
): InStatement[] {
  const seqByIndex = new Map(items.map((item) => [item.index, item.seq]));
  const rows = fresh.map(({ index, event }) => ({
    seq: seqByIndex.get(index)!,
    event,
  }));
  const envelopes = chunkedInsert(
    "obs_envelopes",
    [
      "seq",
      "application_id",
      "event_id",
      "store",
      "source",
      "fingerprint",
      "body",
      "received_at",
    ],
    rows.map(({ seq, event }) => [
      seq,
      event.meta.application_id,
      event.meta.event_id,
      event.meta.store,
      source,
      event.fingerprint,
      event.body,
      receivedAt,
    ]),
  );
  const index = indexStatements(rows.map(({ seq, event }) => ({
    seq,
    received_at: receivedAt,
    fingerprint: event.fingerprint,
    meta: event.meta,
  })));
  const previews = previewStatements(
    rows.flatMap(({ seq, event }) =>
      event.preview
        ? [{ seq, preview: event.preview, created_at: receivedAt }]
        : []
    ),
  );
  return [...envelopes, ...index, ...previews, {
    sql:
      `INSERT INTO obs_state (key, value, updated_at) VALUES ('next_seq', ?, ?)
          ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    args: [String(nextSeqValue), receivedAt],
  }];
}

/** Finds which (application, event id) pairs of the batch already have an owner. */
async function loadOwned(
  tx: Transaction,
  events: NormalizedEvent[],
): Promise<Map<string, Owned>> {
  const byApp = new Map<string, Set<string>>();
  for (const { meta } of events) {
    const ids = byApp.get(meta.application_id) ?? new Set<string>();
    ids.add(meta.event_id);
    byApp.set(meta.application_id, ids);
  }
  const owned = new Map<string, Owned>();
  for (const [applicationId, ids] of byApp) {
    const list = JSON.stringify([...ids]);
    // An index row may outlive its expired envelope and the other way round: both own the id.
    const result = await tx.execute({
      sql: `SELECT event_id, seq, fingerprint FROM obs_events
            WHERE application_id = ?1 AND event_id IN (SELECT value FROM json_each(?2))
            UNION ALL
            SELECT event_id, seq, fingerprint FROM obs_envelopes
            WHERE application_id = ?1 AND event_id IN (SELECT value FROM json_each(?2))`,
      args: [applicationId, list],
    });
    for (const row of result.rows) {
      owned.set(keyOf(applicationId, String(row.event_id)), {
        seq: Number(row.seq),
        fingerprint: String(row.fingerprint),
      });
    }
  }
  return owned;
}

/** Next free `seq`: never reuses a key, even after expiry removed the newest rows. */
async function nextSeq(tx: Transaction): Promise<number> {
  const result = await tx.execute(
    `SELECT MAX(
       COALESCE((SELECT CAST(value AS INTEGER) FROM obs_state WHERE key = 'next_seq'), 1),
       COALESCE((SELECT MAX(seq) FROM obs_envelopes), 0) + 1,
       COALESCE((SELECT MAX(seq) FROM obs_events), 0) + 1
     ) AS next`,
  );
  return Number(result.rows[0]?.next ?? 1);
}

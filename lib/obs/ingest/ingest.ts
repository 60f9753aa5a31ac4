/**
 * Batch ingest. A batch is all-or-nothing: every item is validated first and
 * any refused item refuses the batch, with one issue per item. The canonical
 * envelope and its index rows are written in one transaction (dual-write).
 * The first writer owns a tenant-scoped `event_id`: an identical retry is a
 * no-op that keeps the original row and timestamp, a changed payload under the
 * same id refuses the batch. An id an erasure of scope `all` removed stays
 * owned by its tombstone (`../erased_events.ts`): any resend is a no-op.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import {
  ConfigError,
  ConflictError,
  errorMessage,
  StorageError,
} from "../../errors.ts";
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
import {
  type BatchPlan,
  type IngestItemResult,
  planGroup,
  withLine,
} from "./_plan.ts";
import { writeBatch } from "./_group_commit.ts";
import { runAtOnce, runInTurns } from "./_turns.ts";

export { MAX_BATCH_EVENTS };
export type { IngestItemResult };

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
  /** Source lines of export lines whose preview was left out, so a refusal can say so. */
  previewlessLines?: readonly number[];
}

/** Options for {@link ingestEvents}. */
export interface IngestOptions extends BatchOrigin {
  /** Which path the batch arrived by (default `api`). */
  source?: IngestSource;
  /** Clock for `received_at`, in epoch ms (tests pin it). */
  now?: () => number;
}

/** Result of an accepted batch. */
export interface IngestResult {
  /** Events written by this batch. */
  inserted: number;
  /** Items that repeated a stored event (or an earlier item) exactly: nothing written. */
  duplicates: number;
  /** What happened to each item, in batch order. */
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

/**
 * Validates `inputs` and writes them all, or nothing; resolves once they are
 * committed. Batches of one database handle arriving together share a
 * transaction (group commit), each still all or nothing.
 */
export async function ingestEvents(
  db: TraceDb,
  inputs: readonly unknown[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  refuseLargeBatch(inputs.length);
  await requireObs(db);
  // A large batch is validated in slices, so other requests get turns meanwhile.
  const events = await runInTurns(validationSteps(inputs, options));
  return await writeValidated(db, events, options);
}

function refuseLargeBatch(events: number): void {
  if (events > MAX_BATCH_EVENTS) {
    throw new BatchTooLargeError(
      `Cannot ingest the batch: ${events} events exceed the limit of ${MAX_BATCH_EVENTS}; send smaller batches`,
      MAX_BATCH_EVENTS,
    );
  }
}

/**
 * Writes events {@link validateEventBatch} returned, all or nothing, as
 * {@link ingestEvents} writes what it validated: for a caller that
 * validated a whole file before writing it in batches.
 */
export async function ingestValidated(
  db: TraceDb,
  events: readonly NormalizedEvent[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  refuseLargeBatch(events.length);
  await requireObs(db);
  return await writeValidated(db, events, options);
}

/** Writes events whose batch size and index were checked. */
async function writeValidated(
  db: TraceDb,
  events: readonly NormalizedEvent[],
  options: IngestOptions,
): Promise<IngestResult> {
  if (events.length === 0) return { inserted: 0, duplicates: 0, items: [] };
  let plan: BatchPlan;
  try {
    plan = await writeBatch(db, {
      events,
      // Whole milliseconds: the column and cursors hold integers.
      receivedAt: Math.floor((options.now ?? Date.now)()),
      source: options.source ?? "api",
      lines: options.lines,
      previewlessLines: new Set(options.previewlessLines ?? []),
    });
  } catch (error) {
    incrementCounter("write_failures");
    // Detailed for local callers; the server answers storage errors generically.
    throw new StorageError(
      `Cannot write trace events: ${errorMessage(error)}`,
      { cause: error },
    );
  }
  if (plan.conflicts.length > 0) {
    incrementCounter("batches_refused");
    throw new IngestConflictError(plan.conflicts);
  }
  const inserted = plan.fresh.length;
  incrementCounter("events_written", inserted);
  incrementCounter("duplicate_retries", events.length - inserted);
  incrementCounter(
    "previews_truncated",
    events.filter((e) => e.preview?.truncated).length,
  );
  await notifyIngested(db, plan.fresh);
  return {
    inserted,
    duplicates: events.length - inserted,
    items: plan.items,
  };
}

/** Validates every input without writing; throws {@link IngestBatchError} naming each refused item. */
export function validateEventBatch(
  inputs: readonly unknown[],
  origin: BatchOrigin = {},
): NormalizedEvent[] {
  return runAtOnce(validationSteps(inputs, origin));
}

/**
 * The items of `events` that repeat an earlier item's event id with a
 * different payload, as writing them as one batch would refuse them (the
 * messages say "file"): for a caller that writes a validated file in
 * several batches, so such a file is refused before its first batch is
 * written.
 */
export function conflictsWithin(
  events: readonly NormalizedEvent[],
  origin: BatchOrigin = {},
): EventIssue[] {
  const batch = {
    events,
    receivedAt: 0,
    source: "",
    lines: origin.lines,
    unit: "file" as const,
  };
  return runAtOnce(planGroup([batch], new Map(), 1)).plans[0]!.conflicts;
}

/** Items validated between two pauses of {@link validationSteps}. */
const ITEMS_PER_STEP = 64;

function* validationSteps(
  inputs: readonly unknown[],
  origin: BatchOrigin,
): Generator<void, NormalizedEvent[]> {
  const events: NormalizedEvent[] = [];
  const issues: EventIssue[] = [];
  let refused = 0;
  for (let index = 0; index < inputs.length; index++) {
    const result = normalizeEvent(inputs[index], index);
    if ("fingerprint" in result) events.push(result);
    else if (++refused <= MAX_REPORTED_ISSUES) {
      issues.push(withLine(result, origin.lines));
    }
    if ((index + 1) % ITEMS_PER_STEP === 0) yield;
  }
  if (refused > 0) {
    incrementCounter("batches_refused");
    throw new IngestBatchError(issues, inputs.length, refused);
  }
  return events;
}

/**
 * Which events of a group of batches are new, which repeat an earlier
 * writer's identical event, and which batches are refused because an event
 * id is owned by a different payload (an event whose preview an erasure
 * removed is owned by its redacted envelope, and one an erasure removed
 * whole by its tombstone: a resend of either is a duplicate that restores
 * nothing). Batches are planned in arrival order,
 * each against what the database holds and what the batches before it in
 * the group claim, so a group decides exactly as the same batches written
 * one after the other would. Private to `ingest/`.
 *
 * @module
 */

import { quoteValue } from "../../echo.ts";
import {
  erasedFingerprint,
  type EventIssue,
  type NormalizedEvent,
} from "../normalize.ts";
import { resolveRoots } from "./_roots.ts";
import { ownerKey } from "./_owner_key.ts";

/** One validated batch waiting to be written. */
export interface BatchToWrite {
  events: readonly NormalizedEvent[];
  receivedAt: number;
  source: string;
  /** 1-based source line of each event (NDJSON), for messages. */
  lines: readonly number[] | undefined;
  /** Source lines of export lines whose preview was left out. */
  previewlessLines?: ReadonlySet<number>;
  /** What messages call the whole the events came in; a batch unless said. */
  unit?: "batch" | "file";
}

/** What happened to one item of an accepted batch. */
export interface IngestItemResult {
  /** Position of the item in the batch (0-based). */
  index: number;
  /** The item's event id. */
  event_id: string;
  /** Key of the stored event (the earlier one for a repeat). */
  seq: number;
  /** True for an identical retry (or a repeat within the batch): nothing was written. */
  duplicate: boolean;
}

/** An event id's owner: stored already, or claimed by an item of this group. */
export interface Owned {
  seq: number;
  fingerprint: string;
  /** Index of the item of the claiming batch; absent when stored earlier or claimed by an earlier batch. */
  item?: number;
  /** Owned by the tombstone an erasure of scope `all` left: every resend is a duplicate (`_tombstones.ts`). */
  erased?: true;
}

/** The plan of one batch: its new rows and item results, or the conflicts that refuse it. */
export interface BatchPlan {
  batch: BatchToWrite;
  fresh: { seq: number; event: NormalizedEvent }[];
  items: IngestItemResult[];
  conflicts: EventIssue[];
}

/** The event ids of a group's batches, per application. */
export function eventIdsByApplication(
  batches: readonly BatchToWrite[],
): Map<string, Set<string>> {
  const byApp = new Map<string, Set<string>>();
  for (const { events } of batches) {
    for (const { meta } of events) {
      const ids = byApp.get(meta.application_id) ?? new Set<string>();
      ids.add(meta.event_id);
      byApp.set(meta.application_id, ids);
    }
  }
  return byApp;
}

export { ownerKey } from "./_owner_key.ts";

/**
 * Plans every batch of a group in order from `firstSeq`; `owned` holds the
 * stored owners of the group's ids and gains the claims of accepted batches.
 * `roots` (from `storedRoots`, `null` when the group has no child without
 * a root) likewise holds stored roots and gains those of accepted batches,
 * so each batch's rootless children are filed under their parents' roots
 * (`_roots.ts`) as if the batches were written in turn. A step generator:
 * it pauses between slices of events (run it with `_turns.ts`).
 */
export function* planGroup(
  batches: readonly BatchToWrite[],
  owned: Map<string, Owned>,
  firstSeq: number,
  roots: Map<string, string> | null = null,
): Generator<void, { plans: BatchPlan[]; nextSeq: number }> {
  let seq = firstSeq;
  const plans: BatchPlan[] = [];
  for (const batch of batches) {
    const events = roots ? resolveRoots(batch.events, roots) : batch.events;
    const plan = yield* planBatch(batch, events, owned, seq);
    if (plan.conflicts.length === 0) {
      for (const { seq: claimed, event } of plan.fresh) {
        const key = ownerKey(event.meta.application_id, event.meta.event_id);
        owned.set(key, { seq: claimed, fingerprint: event.fingerprint });
        roots?.set(key, event.meta.root_trace_id);
      }
      seq += plan.fresh.length;
    }
    plans.push(plan);
  }
  return { plans, nextSeq: seq };
}

/** Events planned between two pauses of {@link planGroup}. */
const EVENTS_PER_STEP = 256;

/** Plans `batch`, whose events are `events` with their roots resolved. */
function* planBatch(
  batch: BatchToWrite,
  events: readonly NormalizedEvent[],
  owned: ReadonlyMap<string, Owned>,
  firstSeq: number,
): Generator<void, BatchPlan> {
  // Claims of this batch stay apart until it is known to be accepted.
  const claims = new Map<string, Owned>();
  const plan: BatchPlan = { batch, fresh: [], items: [], conflicts: [] };
  let seq = firstSeq;
  for (let index = 0; index < events.length; index++) {
    if (index > 0 && index % EVENTS_PER_STEP === 0) yield;
    const event = events[index]!;
    const key = ownerKey(event.meta.application_id, event.meta.event_id);
    const prior = claims.get(key) ?? owned.get(key);
    const eventId = event.meta.event_id;
    if (
      prior && prior.fingerprint !== event.fingerprint &&
      !resendOfErased(event, prior)
    ) {
      plan.conflicts.push(
        withLine(conflict(event, index, prior, batch), batch.lines),
      );
      continue;
    }
    if (prior) {
      plan.items.push({
        index,
        event_id: eventId,
        seq: prior.seq,
        duplicate: true,
      });
      continue;
    }
    claims.set(key, { seq, fingerprint: event.fingerprint, item: index });
    plan.fresh.push({ seq, event });
    plan.items.push({ index, event_id: eventId, seq, duplicate: false });
    seq += 1;
  }
  return plan;
}

/**
 * True when `event` is the stored event `prior` as it was before an erasure
 * removed its preview (the envelope now names the preview's size only, and
 * so does this comparison), or when an erasure removed the event whole and
 * left its tombstone (nothing is left to compare). Such a resend is a
 * duplicate: nothing is written and nothing erased is brought back.
 */
function resendOfErased(event: NormalizedEvent, prior: Owned): boolean {
  if (prior.item !== undefined) return false;
  return prior.erased === true ||
    erasedFingerprint(event) === prior.fingerprint;
}

/** `issue` with the source line of its item, when the batch came from NDJSON. */
export function withLine(
  issue: EventIssue,
  lines: readonly number[] | undefined,
): EventIssue {
  const line = lines?.[issue.index];
  return line === undefined ? issue : { ...issue, line };
}

function conflict(
  event: NormalizedEvent,
  index: number,
  prior: Owned,
  { lines, unit = "batch", previewlessLines }: BatchToWrite,
): EventIssue {
  const id = quoteValue(event.meta.event_id);
  const line = lines?.[index];
  if (
    prior.item === undefined && line !== undefined &&
    previewlessLines?.has(line)
  ) {
    // Most likely the export of this very index read back into it: the
    // stored event keeps a preview an export line never carries.
    return {
      index,
      field: "event_id",
      message:
        `${id} is already stored here, and this export line holds no preview (an export carries its size, never its text); ingest an export into another data directory`,
    };
  }
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
      `${id} is repeated in this ${unit} with a different payload (${pair})`,
  };
}

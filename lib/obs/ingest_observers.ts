/**
 * Post-ingest observers: code outside the write path (erasure propagation)
 * registers here to see each batch's newly written events right after the
 * batch commits. An observer never changes what was written and never fails
 * the ingest: the batch is already durable, so a failing observer is counted
 * (`callback_failures`, visible in health) and the next one still runs.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { incrementCounter } from "./counters.ts";
import type { EventMetadata } from "./normalize.ts";

/** One event a committed batch wrote (identical retries are not repeated). */
export interface IngestedEvent {
  seq: number;
  meta: EventMetadata;
}

/** Sees every committed batch's new events, on the database they went to. */
export type IngestObserver = (
  db: TraceDb,
  events: readonly IngestedEvent[],
) => Promise<void> | void;

const OBSERVERS = new Set<IngestObserver>();

/** Registers `observer` for every ingest of this process; returns its unregister function. */
export function observeIngest(observer: IngestObserver): () => void {
  OBSERVERS.add(observer);
  return () => void OBSERVERS.delete(observer);
}

/**
 * Hands a committed batch's new events, as they were written, to every
 * observer (the write path calls it).
 */
export async function notifyIngested(
  db: TraceDb,
  fresh: readonly { seq: number; event: { meta: EventMetadata } }[],
): Promise<void> {
  if (OBSERVERS.size === 0 || fresh.length === 0) return;
  const written = fresh.map(({ seq, event }) => ({ seq, meta: event.meta }));
  for (const observer of [...OBSERVERS]) {
    try {
      await observer(db, written);
    } catch {
      incrementCounter("callback_failures");
    }
  }
}

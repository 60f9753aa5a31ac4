/**
 * Propagation of memory deletions into the index: an ingest observer that
 * looks at each committed batch for deletion events (see
 * `lib/obs/maint/erasure_propagation.ts` for which ones count, and of what),
 * and, for an application that opted in, erases the content Trace holds of
 * the deleted subject at once, with a receipt (trigger `propagation`).
 * Without the opt-in the deletion is only indexed.
 *
 * Every process that ingests should enable it: `trace serve` and
 * `trace events ingest` do; a library user calls
 * {@link enableErasurePropagation} after opening the database.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { errorMessage } from "../errors.ts";
import {
  type ErasureParticipant,
  propagatedErasure,
  propagationEnabled,
} from "../obs/maint/mod.ts";
import { type IngestedEvent, observeIngest } from "../obs/mod.ts";
import { type AppliedErasure, eraseSubjectNow } from "./erasures.ts";

/** Options for {@link enableErasurePropagation} and {@link propagateDeletions}. */
export interface PropagationOptions {
  /** The erasure key of the data directory, or how to load it when a deletion first propagates. */
  key: Uint8Array | (() => Promise<Uint8Array>);
  /** Whether applications without a stored setting take part (`TRACE_OBS_ERASURE_PROPAGATION=true`). */
  byDefault: boolean;
  /** Participants to involve (default: the registered ones). */
  participants?: readonly ErasureParticipant[];
  /** Sees each propagated erasure (a log line, a test). */
  onErased?: (erasure: AppliedErasure) => void;
  /** Sees a propagation that failed; the deletion event stays indexed either way. */
  onError?: (message: string) => void;
}

/** Registers propagation for every ingest of this process; returns the function that stops it. */
export function enableErasurePropagation(
  options: PropagationOptions,
): () => void {
  return observeIngest(async (db, events) => {
    await propagateDeletions(db, events, options);
  });
}

/** Erases what the deletion events among `events` call for, for applications that opted in. */
export async function propagateDeletions(
  db: TraceDb,
  events: readonly IngestedEvent[],
  options: PropagationOptions,
): Promise<AppliedErasure[]> {
  const applied: AppliedErasure[] = [];
  let failure: unknown = null;
  for (const { seq, meta } of events) {
    const erasure = propagatedErasure({ ...meta, seq });
    if (!erasure) continue;
    const app = erasure.subject.application_id;
    if (!await propagationEnabled(db.client, app, options.byDefault)) continue;
    try {
      const key = typeof options.key === "function"
        ? await options.key()
        : options.key;
      const done = await eraseSubjectNow(db, erasure.subject, {
        key,
        scope: "content",
        upToSeq: erasure.upToSeq,
        trigger: "propagation",
        ...(options.participants ? { participants: options.participants } : {}),
      });
      applied.push(done);
      options.onErased?.(done);
    } catch (error) {
      options.onError?.(
        `Cannot propagate a memory deletion of application ${app} (event seq ${seq}): ${
          errorMessage(error)
        }; the deletion is indexed, erase its subject with trace obs erase`,
      );
      failure ??= error;
    }
  }
  // The other deletions of the batch were still tried; the failure is counted by the caller.
  if (failure !== null) throw failure;
  return applied;
}

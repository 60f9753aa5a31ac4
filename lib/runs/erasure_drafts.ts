/**
 * Replay drafts as a participant of every erasure Trace runs with a
 * receipt. A draft names the trace it was drawn from (agent, root, turn and
 * run ids) and keeps the operator's reason, so an erasure of scope `all`
 * removes each draft drawn from one of its events, and, for a user or the
 * anonymous users, each draft naming that user (its events may have gone
 * earlier, through retention) unless it is drawn only from events written
 * after the dry run's bound, which the erasure leaves in place. A `content` erasure keeps every draft: a
 * draft holds no preview and no digest of one, and the metadata it names
 * stays in the index too.
 *
 * @module
 */

import { deleteDrafts, type DraftErasure, draftsReached } from "../auth/mod.ts";
import {
  type ErasureExecutor,
  type ErasureParticipant,
  erasureParticipants,
  type ErasureTarget,
} from "../obs/maint/mod.ts";

/** Trace's own participant: the replay drafts an erasure reaches. */
const REPLAY_DRAFTS: ErasureParticipant = {
  name: "replay_drafts",
  count: async (executor, target) =>
    (await reachedDrafts(executor, target)).length,
  erase: async (tx, target) =>
    await deleteDrafts(tx, await reachedDrafts(tx, target)),
};

/**
 * The participants of an erasure: Trace's own ({@link REPLAY_DRAFTS}),
 * then `given`, or the registered ones when none are given.
 */
export function withOwnParticipants(
  given: readonly ErasureParticipant[] | undefined,
): ErasureParticipant[] {
  return [REPLAY_DRAFTS, ...(given ?? erasureParticipants())];
}

async function reachedDrafts(
  executor: ErasureExecutor,
  target: ErasureTarget,
): Promise<string[]> {
  if (target.scope !== "all") return [];
  const { subject } = target;
  const erasure: DraftErasure = {
    application_id: subject.application_id,
    events: target.events,
    kept: target.later_events,
  };
  if (subject.kind === "user") erasure.user = subject.ids[0]!;
  if (subject.kind === "anonymous") erasure.user = null;
  return await draftsReached(executor, erasure);
}

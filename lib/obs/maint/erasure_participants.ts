/**
 * Erasure participants: stores outside the index that keep something derived
 * from trace events (audit entries, replay drafts, caches) register here, and
 * every erasure counts them in its dry run, calls them inside its own write
 * transaction, and re-counts them when a receipt is verified. A participant
 * removes its records of the subject, or rewrites them so that only
 * content-free, non-identifying references remain (a keyed digest instead of
 * an id, counts instead of text).
 *
 * The registry is process-wide: a store registers once when it is set up
 * (`registerErasureParticipant` returns the function that unregisters it).
 * An erasure may also be given its own list.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { ConfigError } from "../../errors.ts";
import type { ErasureSubject } from "./erasure_subject.ts";

/** Something that runs SQL: a client or an open transaction. */
export type ErasureExecutor = Pick<Transaction, "execute">;

/** What is erased: everything Trace keeps of the subject, or its content (previews) only. */
export const ERASURE_SCOPES = ["all", "content"] as const;
/** One of {@link ERASURE_SCOPES}. */
export type ErasureScope = typeof ERASURE_SCOPES[number];

/** The index key of one event an erasure removes. */
export interface ErasedEventKey {
  seq: number;
  application_id: string;
  event_id: string;
}

/** What a participant is asked about. */
export interface ErasureTarget {
  subject: ErasureSubject;
  /** The subject's keyed digest: the only form of it a participant may keep. */
  subject_digest: string;
  scope: ErasureScope;
  /**
   * The events still matching the subject (when a receipt is verified after
   * the erasure, usually none: match the subject itself where you can).
   */
  events: readonly ErasedEventKey[];
}

/** A store outside the index that must forget with it. */
export interface ErasureParticipant {
  /** Names its count in plans and receipts: a lower-case token such as `audit_entries`. */
  name: string;
  /** How many of its records refer to the target (dry runs and verification). */
  count(executor: ErasureExecutor, target: ErasureTarget): Promise<number>;
  /**
   * Removes those records, or rewrites them to content-free, non-identifying
   * references, inside the erasure's write transaction (a throw rolls the
   * whole erasure back); returns how many records it changed.
   */
  erase(tx: Transaction, target: ErasureTarget): Promise<number>;
}

const PARTICIPANTS = new Map<string, ErasureParticipant>();
const NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Registers a participant for every erasure of this process; returns its unregister function. */
export function registerErasureParticipant(
  participant: ErasureParticipant,
): () => void {
  if (!NAME.test(participant.name)) {
    throw new ConfigError(
      `Invalid erasure participant name "${participant.name}": use a lower-case token (a-z, 0-9, _)`,
    );
  }
  if (PARTICIPANTS.has(participant.name)) {
    throw new ConfigError(
      `Cannot register erasure participant "${participant.name}": one with that name is registered; unregister it first`,
    );
  }
  PARTICIPANTS.set(participant.name, participant);
  return () => {
    if (PARTICIPANTS.get(participant.name) === participant) {
      PARTICIPANTS.delete(participant.name);
    }
  };
}

/** The registered participants, in registration order. */
export function erasureParticipants(): ErasureParticipant[] {
  return [...PARTICIPANTS.values()];
}

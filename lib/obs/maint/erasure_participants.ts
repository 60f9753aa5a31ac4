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

import { ConfigError } from "../../errors.ts";
import type { ErasureSubject } from "./erasure_subject.ts";

/** A value a statement binds (libSQL's). */
export type SqlArgument =
  | null
  | string
  | number
  | bigint
  | ArrayBuffer
  | boolean
  | Uint8Array
  | Date;

/** A value a row holds (libSQL's). */
export type SqlCell = null | string | number | bigint | ArrayBuffer;

/** One SQL statement and its positional or named arguments. */
export interface SqlStatement {
  /** The SQL text, with `?` or `:name` placeholders. */
  sql: string;
  /** Values for the placeholders. */
  args?: SqlArgument[] | Record<string, SqlArgument>;
}

/** What a statement returned. */
export interface SqlResult {
  /** The rows read, each by column name. */
  rows: readonly Record<string, SqlCell>[];
  /** Rows an `INSERT`, `UPDATE` or `DELETE` changed. */
  rowsAffected: number;
}

/**
 * Something that runs SQL in the database the erasure runs in: the client,
 * or the erasure's open write transaction (libSQL's `Transaction` is one).
 */
export interface ErasureExecutor {
  /** Runs one statement. */
  execute(statement: string | SqlStatement): Promise<SqlResult>;
}

/** What is erased: everything Trace keeps of the subject, or its content (previews) only. */
export const ERASURE_SCOPES = ["all", "content"] as const;
/** One of {@link ERASURE_SCOPES}. */
export type ErasureScope = typeof ERASURE_SCOPES[number];

/** The index key of one event an erasure removes. */
export interface ErasedEventKey {
  /** The event's index key. */
  seq: number;
  /** Its tenant. */
  application_id: string;
  /** The writer's id for it. */
  event_id: string;
}

/** An event an erasure removes: its index key and the trace it belongs to. */
export interface ErasedEvent extends ErasedEventKey {
  /** The agent that wrote it, or `null`. */
  agent_id: string | null;
  /** The trace it belongs to (`null` only for a stored body that does not name one). */
  root_trace_id: string | null;
  /** Its turn, or `null`. */
  turn_id: string | null;
  /** Its run, or `null`. */
  run_id: string | null;
}

/** What a participant is asked about. */
export interface ErasureTarget {
  /** Whom or what to forget. */
  subject: ErasureSubject;
  /** The subject's keyed digest: the only form of it a participant may keep. */
  subject_digest: string;
  /** Everything Trace keeps of the subject (`all`), or its content only (`content`: previews). */
  scope: ErasureScope;
  /**
   * The events still matching the subject (when a receipt is verified after
   * the erasure, usually none: match the subject itself where you can).
   */
  events: readonly ErasedEvent[];
  /**
   * Events of the subject written after the bound its dry run reviewed:
   * this erasure leaves them in place, so a record drawn only from them is
   * not the erasure's to remove (usually none).
   */
  later_events: readonly ErasedEvent[];
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
  erase(tx: ErasureExecutor, target: ErasureTarget): Promise<number>;
}

const PARTICIPANTS = new Map<string, ErasureParticipant>();
const NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Names of the participants Trace itself adds to every erasure it runs with
 * a receipt (`lib/runs/erasures.ts`): a registered one may not take them.
 */
export const OWN_PARTICIPANTS: readonly string[] = ["replay_drafts"];

/** Registers a participant for every erasure of this process; returns its unregister function. */
export function registerErasureParticipant(
  participant: ErasureParticipant,
): () => void {
  if (!NAME.test(participant.name)) {
    throw new ConfigError(
      `Invalid erasure participant name "${participant.name}": use a lower-case token (a-z, 0-9, _)`,
    );
  }
  if (OWN_PARTICIPANTS.includes(participant.name)) {
    throw new ConfigError(
      `Cannot register erasure participant "${participant.name}": Trace's own participant has that name; choose another`,
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

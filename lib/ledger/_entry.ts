/**
 * Ledger entries as values: their kinds, digests and row form. Pure
 * functions only, shared by the writer, the readers and `ledger verify`.
 *
 * Chain version 1 digests cover kind, entity id and payload digest; version 2
 * (every entry written by this build) also covers target id and created_at.
 * Rows keep the version they were written with, and are verified by it.
 *
 * @module
 */

import { canonicalJson, sha256Hex } from "../canonical_json.ts";

/** Kinds of ledger entries. */
export const ENTRY_KINDS = [
  "run",
  "reference_run",
  "target",
  "regression",
  "replay",
  "cleanup",
  "retirement",
  "erasure",
] as const;

/** One of {@link ENTRY_KINDS}. */
export type EntryKind = typeof ENTRY_KINDS[number];

/** Chain digest of the empty ledger. */
export const GENESIS = "sha256:" + "0".repeat(64);

/** Chain digest versions: 1 (before target id and created_at were covered) and 2. */
export const CHAIN_VERSIONS = [1, 2] as const;

/** One of {@link CHAIN_VERSIONS}. */
export type ChainVersion = typeof CHAIN_VERSIONS[number];

/** The version new entries are chained with. */
export const CURRENT_CHAIN_VERSION: ChainVersion = 2;

/** A stored entry as read back. */
export interface LedgerEntry {
  seq: number;
  kind: EntryKind;
  entity_id: string;
  target_id: string | null;
  payload: string;
  payload_digest: string;
  prev_chain: string;
  chain_digest: string;
  created_at: string;
  /** Which columns the chain digest covers (see {@link chainDigest}). */
  chain_version: number;
}

/** An entry to append. */
export interface NewEntry {
  kind: EntryKind;
  entityId: string;
  targetId: string | null;
  payload: unknown;
}

/** Digest of a canonical payload string. */
export function payloadDigest(payload: string): string {
  return `sha256:${sha256Hex(payload)}`;
}

/** The columns of an entry that its chain digest covers. */
export type ChainedFields = Pick<
  LedgerEntry,
  | "chain_version"
  | "prev_chain"
  | "kind"
  | "entity_id"
  | "target_id"
  | "payload_digest"
  | "created_at"
>;

/** Chain digest linking an entry to its predecessor, by the entry's chain version. */
export function chainDigest(entry: ChainedFields): string {
  if (entry.chain_version === 1) {
    return `sha256:${
      sha256Hex(
        `${entry.prev_chain}\n${entry.kind}\n${entry.entity_id}\n${entry.payload_digest}`,
      )
    }`;
  }
  if (entry.chain_version === 2) {
    // A JSON array keeps the fields unambiguous (a null target id, newlines in ids).
    return `sha256:${
      sha256Hex(canonicalJson([
        2,
        entry.prev_chain,
        entry.kind,
        entry.entity_id,
        entry.target_id,
        entry.created_at,
        entry.payload_digest,
      ]))
    }`;
  }
  throw new RangeError(`Unknown chain version ${entry.chain_version}`);
}

/** Converts a result row into a {@link LedgerEntry}. */
export function toEntry(row: Record<string, unknown>): LedgerEntry {
  return {
    seq: Number(row.seq),
    kind: String(row.kind) as EntryKind,
    entity_id: String(row.entity_id),
    target_id: row.target_id === null || row.target_id === undefined
      ? null
      : String(row.target_id),
    payload: row.payload === undefined ? "" : String(row.payload),
    payload_digest: String(row.payload_digest),
    prev_chain: String(row.prev_chain),
    chain_digest: String(row.chain_digest),
    created_at: String(row.created_at),
    chain_version: Number(row.chain_version ?? 1),
  };
}

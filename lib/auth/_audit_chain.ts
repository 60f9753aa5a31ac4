/**
 * How one audit row is chained and checked, shared by the writer (which
 * checks the row it extends) and the readers (which walk the whole trail).
 *
 * A row's chain digest covers its previous chain digest, `entry_id`,
 * `created_at` and the payload's digest. The other columns (`operator`,
 * `action`, `outcome`) are copies of payload fields kept for filtering;
 * they are not chained themselves, so every check compares each of them
 * with the payload: a column edited alone is as broken as an edited payload.
 *
 * Entries written since payload version 2 also chain `subject_key`, the
 * fingerprint of the key their ids were digested under; a check given the
 * current key's fingerprint compares the two, so a key replaced after the
 * entry was written breaks it (version-1 entries carry no fingerprint).
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { chainDigest, type EntryKind, payloadDigest } from "../ledger/chain.ts";
import { KEY_REPLACED } from "./audit_integrity.ts";

/** Something SQL runs on: the client or a transaction. */
export type AuditExecutor = Pick<Transaction, "execute">;

/** The kind audit entries are chained under (they live in their own chain, never in the ledger). */
const AUDIT_KIND = "audit" as unknown as EntryKind;

/** The ledger's version-2 chain digest over an audit row's chained columns. */
export function auditChain(
  prev: string,
  entryId: string,
  createdAt: string,
  digest: string,
): string {
  return chainDigest({
    chain_version: 2,
    prev_chain: prev,
    kind: AUDIT_KIND,
    entity_id: entryId,
    target_id: null,
    created_at: createdAt,
    payload_digest: digest,
  });
}

/** Each unchained column and the payload field it must equal. */
const COPIED: readonly (readonly [string, string])[] = [
  ["entry_id", "entry_id"],
  ["created_at", "at"],
  ["operator", "operator"],
  ["action", "action"],
  ["outcome", "outcome"],
];

/**
 * What is wrong with `row` when it follows a row whose chain digest is
 * `prev`, or `null`: its payload digest, every column copied from the
 * payload, the link to `prev`, its own chain digest and, given the current
 * subject key's `fingerprint`, the one the entry was written with.
 */
export function auditRowProblem(
  row: Record<string, unknown>,
  prev: string,
  fingerprint?: string,
): string | null {
  const text = String(row.payload);
  const digest = String(row.payload_digest);
  if (payloadDigest(text) !== digest) return "payload digest mismatch";
  const payload = parsePayload(text);
  if (!payload) return "the payload is not a JSON object";
  for (const [column, field] of COPIED) {
    if (String(row[column]) !== payload[field]) {
      return `the ${column} column differs from the chained payload (the column was edited)`;
    }
  }
  if (String(row.prev_chain) !== prev) {
    return "previous chain digest mismatch (an entry before it was removed or changed)";
  }
  const expected = auditChain(
    prev,
    String(row.entry_id),
    String(row.created_at),
    digest,
  );
  if (expected !== String(row.chain_digest)) return "chain digest mismatch";
  return fingerprint === undefined ? null : keyProblem(payload, fingerprint);
}

/** A version-2 payload must name the key `fingerprint` identifies; a version-1 payload names none. */
function keyProblem(
  payload: Record<string, unknown>,
  fingerprint: string,
): string | null {
  if (payload.v === 1 && !("subject_key" in payload)) return null;
  if (payload.v !== 2 || typeof payload.subject_key !== "string") {
    return "the payload has no valid version and subject key fingerprint";
  }
  return payload.subject_key === fingerprint ? null : KEY_REPLACED;
}

/** The payload as an object, or `null` when it is not one. */
export function parsePayload(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? value as Record<string, unknown>
      : null;
  } catch {
    return null;
  }
}

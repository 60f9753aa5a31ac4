/**
 * The one refusal every reader and writer of the audit trail gives for a
 * trail that does not verify: a stable code (`audit_integrity`) that the
 * CLI and the HTTP app map once each, and a one-line message naming the
 * broken entry and `trace audit verify`.
 *
 * @module
 */

import { TraceError } from "../errors.ts";

/** The audit trail failed verification: nothing is read from it or appended to it. */
export class AuditIntegrityError extends TraceError {
  /** The first broken entry's seq. */
  readonly seq: number;

  /** `message` is one line: what was wrong and what to do. */
  constructor(seq: number, message: string, options?: ErrorOptions) {
    super("audit_integrity", message, options);
    this.name = "AuditIntegrityError";
    this.seq = seq;
  }
}

/** The problem `verifyAudit` reports when entries exist and their subject key does not. */
export const KEY_MISSING =
  "the subject key in auth_keys is missing (it was deleted): no stored digest can be matched to a subject";

/** The problem `verifyAudit` reports when the subject key is not the one an entry was written with. */
export const KEY_REPLACED =
  "the subject key in auth_keys is not the one this entry was written with (its fingerprint differs: the key was replaced): stored digests no longer match their subjects";

/** How the problem `verifyAudit` reports for a removed table of the trail begins. */
export const TABLE_REMOVED = "the table";

/** The refusal readers give for a trail `verifyAudit` calls broken. */
export function brokenAudit(
  broken: { seq: number; problem: string },
): AuditIntegrityError {
  const table = removedTable(broken.problem);
  if (table !== null) {
    return new AuditIntegrityError(
      broken.seq,
      `The audit trail's table ${table} was removed: run trace audit verify`,
    );
  }
  if (broken.problem === KEY_MISSING) {
    return new AuditIntegrityError(
      broken.seq,
      "The audit trail's subject key is missing from the database, so no entry can be matched to a subject: run trace audit verify",
    );
  }
  if (broken.problem === KEY_REPLACED) {
    return new AuditIntegrityError(
      broken.seq,
      `The audit trail's subject key is not the one entry seq ${broken.seq} was written with (it was replaced), so no entry can be matched to a subject: run trace audit verify`,
    );
  }
  return new AuditIntegrityError(
    broken.seq,
    `The audit trail is broken at entry seq ${broken.seq}: run trace audit verify`,
  );
}

/** The refusal an append gives: the action it would record is refused with it. */
export function unextendable(
  broken: { seq: number; problem: string },
): AuditIntegrityError {
  return new AuditIntegrityError(
    broken.seq,
    `The audit trail is broken at entry seq ${broken.seq} (${broken.problem}), so the action was refused: run trace audit verify`,
  );
}

function removedTable(problem: string): string | null {
  const match = new RegExp(`^${TABLE_REMOVED} (\\w+) is missing`).exec(
    problem,
  );
  return match ? match[1]! : null;
}

/** The one wording of missing guards (append-only triggers) for `ledger verify` and `audit verify`. */

import type { CliIo } from "./_io.ts";

/**
 * Warns on stderr about guards `verify` found missing, or says which it
 * restored: the evidence may still verify, but its tables no longer refuse
 * UPDATE or DELETE, which the operator must hear about either way.
 */
export function reportGuards(
  io: CliIo,
  what: "ledger" | "audit",
  missing: readonly string[],
  restored: readonly string[],
  restoring: boolean,
): void {
  const command = `trace ${what} verify`;
  const owner = what === "ledger" ? "the ledger's" : "the audit trail's";
  if (restored.length > 0) {
    io.err(
      `${command}: restored ${owner} guards ${
        restored.join(", ")
      }: its tables refuse UPDATE and DELETE again\n`,
    );
  }
  const left = missing.filter((name) => !restored.includes(name));
  if (left.length === 0) {
    if (restoring && missing.length === 0) {
      io.err(`${command}: ${owner} guards are all in place\n`);
    }
    return;
  }
  io.err(
    `${command}: warning: ${owner} guards ${
      left.join(", ")
    } are missing or changed (dropped with an outside tool): its tables no longer refuse UPDATE or DELETE; restore them with ${command} --restore-guards, and check who changed the database\n`,
  );
}

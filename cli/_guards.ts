/** The one wording of missing guards (append-only triggers) for `ledger verify` and `audit verify`. */

import type { CliIo } from "./_io.ts";

/** `--restore-guards` writes triggers, nothing else: no migration, but a checkpoint. */
export const RESTORE_GUARDS = {
  write: false,
  create: false,
  checkpoint: true,
} as const;

/** What `verify` found of the guards, and with `--restore-guards` what it restored. */
interface GuardsChecked {
  missing_guards: string[];
  restored_guards?: string[];
}

/**
 * With `restore`, re-creates the guards `verified` found missing (no write
 * when none is) and adds `restored_guards` to the answer; else `verified`.
 */
export async function restoreGuardsIfAsked<T extends GuardsChecked>(
  verified: T,
  restore: boolean,
  restoreGuards: () => Promise<string[]>,
): Promise<T> {
  if (!restore) return verified;
  const restored = verified.missing_guards.length > 0
    ? await restoreGuards()
    : [];
  return { ...verified, restored_guards: restored };
}

/** Options for {@link reportGuards}. */
export interface GuardsReportOptions {
  /** The command speaking, when not `verify` itself (`trace ledger backup`). */
  command?: string;
  /** The backup the guards were checked in: they came from the database it copied. */
  copy?: string;
}

/**
 * Warns on stderr about guards `verify` found missing, or says which it
 * restored: the evidence may still verify, but its tables no longer refuse
 * UPDATE or DELETE, which the operator must hear about either way.
 */
export function reportGuards(
  io: CliIo,
  what: "ledger" | "audit",
  { missing_guards: missing, restored_guards }: GuardsChecked,
  options: GuardsReportOptions = {},
): void {
  const restoring = restored_guards !== undefined;
  const restored = restored_guards ?? [];
  const command = `trace ${what} verify`;
  const speaker = options.command ?? command;
  const copy = options.copy === undefined ? "" : ` in the copy ${options.copy}`;
  const again = options.copy === undefined ? "" : " and back up again";
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
    `${speaker}: warning: ${owner} guards ${
      left.join(", ")
    } are missing or changed${copy} (dropped with an outside tool): its tables no longer refuse UPDATE or DELETE; restore them with ${command} --restore-guards${again}, and check who changed the database\n`,
  );
}

/** Where the steps to restore a backup are written down, named by a broken `verify`. */
export const RESTORE_STEPS = "docs/ledger.md#restoring-a-backup";

/** The advice after a broken `verify`: restore a backup (and where the steps are) or investigate. */
export const RESTORE_ADVICE =
  `restore trace.db from a backup (trace ledger backup; steps in ${RESTORE_STEPS}) or investigate who changed it`;

/** A broken `verify` answer names the restore steps too (`restore_steps`, an added field). */
export function withRestoreSteps<T extends { broken: unknown }>(
  result: T,
): T & { restore_steps: string | null } {
  return { ...result, restore_steps: result.broken ? RESTORE_STEPS : null };
}

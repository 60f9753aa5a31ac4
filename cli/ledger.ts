/** `trace ledger verify`: recompute every digest and the chain. */

import { LedgerIntegrityError, UsageError } from "../lib/errors.ts";
import { requireLedger } from "../lib/ledger/schema.ts";
import { type LedgerVerification, verifyLedger } from "../lib/ledger/verify.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";

const HELP = `Usage: trace ledger verify [--json] [--data-dir DIR] [--db URL]

Recomputes the SHA-256 digest of every ledger entry and the chain linking
them, checks the head records (which catch a removed last entry) and that each
registered target matches its chained registration. Exits 0 when intact, 1
naming the first broken row (seq, kind, id) when anything was altered or
removed. Keep the printed head digest elsewhere to detect a replaced file.
`;

/** `trace ledger`: ledger maintenance (`verify`). */
export const ledger: Command = async (args, io) => {
  const { values, positionals } = parseFlags("ledger", args, DATA_FLAGS, {
    max: 1,
  });
  if (values.help) return showHelp(io, HELP);
  if (positionals[0] !== "verify") {
    throw new UsageError(
      `${
        positionals[0]
          ? `Unknown subcommand ${JSON.stringify(positionals[0])}`
          : "Missing subcommand"
      }; use trace ledger verify (see trace ledger --help)`,
    );
  }
  return await withDataContext(values, io, { write: false }, async ({ db }) => {
    await requireLedger(db);
    const result = await verifyLedger(db);
    if (values.json) printJson(io, result);
    else io.out(renderVerification(result));
    if (result.broken) {
      const b = result.broken;
      throw new LedgerIntegrityError(
        `Ledger verification failed at row seq ${b.seq} (${b.kind} "${b.entity_id}"): ${b.problem}; restore the database from a backup or investigate who changed it`,
      );
    }
    return 0;
  });
};

function renderVerification(result: LedgerVerification): string {
  if (result.ok) {
    const head = result.head
      ? `; head seq ${result.head.seq} ${result.head.chain_digest}`
      : "";
    return `ledger intact: ${result.entries} entr${
      result.entries === 1 ? "y" : "ies"
    }, ${result.targets} target(s)${head}\n`;
  }
  const b = result.broken!;
  return `ledger BROKEN at seq ${b.seq} (${b.kind} "${b.entity_id}"): ${b.problem}\n`;
}

/** Read access to the ledger for the commands that list, show and compare. */

import { appliedVersions, type TraceDb } from "../lib/db.ts";
import { requireLedger } from "../lib/ledger/schema.ts";
import { type DataContext, withDataContext } from "./_context.ts";
import type { CliIo } from "./_io.ts";
import type { DataValues } from "./_run_outputs.ts";

/** Runs `fn` against an existing, current ledger, read-only. */
export async function withLedger<T>(
  values: DataValues,
  io: CliIo,
  fn: (context: DataContext) => Promise<T>,
): Promise<T> {
  return await withDataContext(
    values,
    io,
    { write: false },
    async (context) => {
      await requireLedger(context.db);
      return await fn(context);
    },
  );
}

/** False for a database never written to; throws when the ledger is older than this build. */
export async function hasLedger(db: TraceDb): Promise<boolean> {
  if (!(await appliedVersions(db)).has("ledger")) return false;
  await requireLedger(db);
  return true;
}

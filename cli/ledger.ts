/**
 * `trace ledger verify`, `trace ledger head` and `trace ledger backup`: the
 * ledger's integrity, its head to keep elsewhere, and a single-file copy.
 *
 * @module
 */

import { terminalSafe } from "../lib/display.ts";
import { backupDb, dbLocation, openDb } from "../lib/db.ts";
import { UsageError } from "../lib/errors.ts";
import {
  formatHead,
  headView,
  ledgerHead,
  parseHead,
} from "../lib/ledger/head.ts";
import {
  hasLedger,
  requireLedger,
  restoreLedgerGuards,
} from "../lib/ledger/schema.ts";
import { type LedgerVerification, verifyLedger } from "../lib/ledger/verify.ts";
import { refuseStateDestination } from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { CliIo, Command } from "./_io.ts";
import {
  reportGuards,
  RESTORE_ADVICE,
  RESTORE_GUARDS,
  restoreGuardsIfAsked,
  withRestoreSteps,
} from "./_guards.ts";

const READ = { write: false, readOnly: true } as const;

const VERIFY_FLAGS = {
  ...DATA_FLAGS,
  "expect-head": { type: "string" },
  "restore-guards": { type: "boolean" },
} as const;

const VERIFY_HELP =
  `Usage: trace ledger verify [--expect-head HEAD] [--restore-guards] [--json] [--data-dir DIR] [--db URL]

Recomputes the SHA-256 digest of every ledger entry and the chain linking
them, checks the head records (which catch a removed last entry) and that each
registered target matches its chained registration. With --expect-head HEAD
(as printed earlier by trace ledger head, the gate or a CI summary) it also
checks that the ledger still extends that head: entries removed from its end,
or a replaced file, fail. Opens the database read-only.

It also checks the ledger's guards, the triggers that make its tables refuse
UPDATE and DELETE: one dropped or changed with an outside tool is named in a
warning (the chain still catches edits, but the tables no longer refuse
them). --restore-guards re-creates them with the ledger's own migration
statements, after verifying (this opens the database for writing; it adds
triggers and changes no row).

Exit codes: 0 intact (also with a guard missing: see the warning); 1 broken,
naming the first broken entry (seq, kind, id); 2 usage error or no ledger.
`;

/** `trace ledger verify`: recompute every digest and the chain. */
export const ledgerVerify: Command = async (args, io) => {
  const { values } = parseFlags("ledger verify", args, VERIFY_FLAGS);
  if (values.help) return showHelp(io, VERIFY_HELP);
  const expected = values["expect-head"] === undefined
    ? undefined
    : parseHead(values["expect-head"]);
  const restore = values["restore-guards"] === true;
  const access = restore ? RESTORE_GUARDS : READ;
  return await withDataContext(values, io, access, async ({ db }) => {
    await requireLedger(db);
    const verified = await verifyLedger(
      db,
      expected ? { expectHead: expected } : {},
    );
    const result = await restoreGuardsIfAsked(
      verified,
      restore,
      () => restoreLedgerGuards(db),
    );
    if (values.json) printJson(io, withRestoreSteps(result));
    else io.out(renderVerification(result));
    reportGuards(io, "ledger", result);
    if (!result.broken) return 0;
    const b = result.broken;
    io.err(
      `trace ledger verify: Ledger verification failed at entry ${b.seq} (${b.kind} "${b.entity_id}"): ${b.problem}; ${RESTORE_ADVICE}\n`,
    );
    return 1;
  });
};

function renderVerification(result: LedgerVerification): string {
  const expected = result.expected_head
    ? `; extends the expected head ${result.expected_head.head}`
    : "";
  if (result.ok) {
    const head = result.head
      ? `; head ${formatHead(result.head)}`
      : "; head 0 (empty)";
    return `ledger intact: ${result.entries} entr${
      result.entries === 1 ? "y" : "ies"
    }, ${result.targets} target(s)${head}${expected}\n`;
  }
  const b = result.broken!;
  return `ledger BROKEN at entry ${b.seq} (${b.kind} "${b.entity_id}"): ${b.problem}\n`;
}

const HEAD_HELP = `Usage: trace ledger head [--json] [--data-dir DIR] [--db URL]

Prints the ledger's head, SEQ:sha256:<digest>: the number and chain digest of
its newest entry, after verifying the chain up to it. Keep it somewhere the
database cannot reach (a CI log, a ticket, another machine) and check later
with trace ledger verify --expect-head HEAD that the ledger still extends it.
`;

/** `trace ledger head`: the verified head, to keep outside the database. */
export const ledgerHeadCommand: Command = async (args, io) => {
  const { values } = parseFlags("ledger head", args, DATA_FLAGS);
  if (values.help) return showHelp(io, HEAD_HELP);
  return await withDataContext(values, io, READ, async ({ db }) => {
    await requireLedger(db);
    const head = headView(await ledgerHead(db));
    if (values.json) printJson(io, head);
    else {
      // The head alone on stdout, so `H=$(trace ledger head)` keeps just it.
      io.out(`${head.head}\n`);
      io.err(
        `${head.entries} entr${
          head.entries === 1 ? "y" : "ies"
        }; check later with: trace ledger verify --expect-head ${head.head}\n`,
      );
    }
    return 0;
  });
};

const BACKUP_HELP =
  `Usage: trace ledger backup FILE [--json] [--data-dir DIR] [--db URL]

Writes a consistent single-file copy of the database (ledger and index, as of
one moment, also while other commands write) to FILE, owner-only, with
SQLite's VACUUM INTO, then verifies the copy's ledger. This is the way to back
up: copying trace.db by hand can miss what is still in its -wal file. Refuses
an existing FILE, a FILE named like a database's -journal, -wal or -shm
file (SQLite would discard it), and a FILE in the data directory's external/
folder or at its erasure.key (Trace would read it as its own state). Works
for a local database file only.

The copy holds the database only: keep the data directory's erasure.key
(erasures and their receipts' checks need the key that made them, and
trace serve refuses to start without it once receipts exist) and its
external/ folder with it; docs/ledger.md#restoring-a-backup.

Ctrl-C (or SIGTERM) stops the copy and removes what was written of it
(exit 2); the engine notices between steps, so the first one may take until
the copy is finished. A second exits at once and removes it too.

A guard (append-only trigger) missing from the copy, and so from the
database, is named in a warning, as trace ledger verify does.

Exit codes: 0 written and intact; 1 written but its ledger is broken (the
database was already broken); 2 not written (interrupted included).
`;

/** `trace ledger backup FILE`: a consistent single-file copy, verified. */
export const ledgerBackup: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "ledger backup",
    args,
    DATA_FLAGS,
    { min: 1, max: 1, names: ["FILE"] },
  );
  if (values.help) return showHelp(io, BACKUP_HELP);
  const file = positionals[0]!;
  if (file === "") {
    throw new UsageError(
      "Cannot write a backup to an empty path: name a file; see trace ledger backup --help",
    );
  }
  if (file === "-") {
    throw new UsageError(
      "Cannot write a backup to stdout: name a file; see trace ledger backup --help",
    );
  }
  const source = await withPartialCopyRemoved(
    io,
    file,
    (signal) =>
      withDataContext(values, io, READ, async ({ db, dataDir }) => {
        await refuseStateDestination(file, dataDir);
        await backupDb(db, file, { signal });
        return dbLocation(db);
      }),
  );
  const result = await verifyCopy(file);
  if (values.json) {
    printJson(io, { backup: file, source, verification: result });
  } else io.out(renderBackup(file, source, result));
  // The copy holds the triggers its database had: a missing one is missing there too.
  if (result !== null) {
    reportGuards(io, "ledger", result, {
      command: "trace ledger backup",
      copy: terminalSafe(file),
    });
  }
  return result === null || result.ok ? 0 : 1;
};

/**
 * Runs `copy` with Ctrl-C / SIGTERM handled, so that a signal no longer
 * kills the process halfway through the file: the first one stops the
 * backup, which removes its copy; a second, which exits at once, removes
 * the copy on the way out. Either way no partial copy is left behind.
 */
async function withPartialCopyRemoved<T>(
  io: CliIo,
  file: string,
  copy: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  let copying = true;
  io.onExitAtOnce?.(() => {
    if (!copying) return;
    try {
      Deno.removeSync(file);
    } catch {
      // Not created yet, or already removed: nothing is left either way.
    }
  });
  io.setExitNote?.(
    `the partial backup ${
      terminalSafe(file)
    } was removed; run trace ledger backup again`,
  );
  try {
    return await copy(io.interrupted);
  } finally {
    copying = false;
    io.setExitNote?.(null);
  }
}

/** Opens the copy read-only and verifies its ledger; `null` when it holds no ledger. */
async function verifyCopy(file: string): Promise<LedgerVerification | null> {
  const copy = await openDb({ url: `file:${file}`, readOnly: true });
  try {
    return await hasLedger(copy) ? await verifyLedger(copy) : null;
  } finally {
    copy.close();
  }
}

function renderBackup(
  path: string,
  location: string,
  result: LedgerVerification | null,
): string {
  const [file, source] = [terminalSafe(path), terminalSafe(location)];
  if (result === null) {
    return `backup of ${source} written to ${file} (no ledger in it yet)\n`;
  }
  return `backup of ${source} written to ${file}: ${
    renderVerification(result)
  }`;
}

/** `trace external-register`, `trace external-targets` and `trace external-retire`. */

import { UsageError } from "../lib/errors.ts";
import type {
  TargetSummary,
  UnregisteredTarget,
} from "../lib/ledger/target_summaries.ts";
import { validateTargetId } from "../lib/ledger/targets.ts";
import {
  registerNamedTarget,
  retireRunTarget,
  targetListing,
} from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";
import { renderTable } from "./_table.ts";
import { requireConfig } from "./_config_input.ts";

/** Readers open the database read-only. */
const READ = { write: false, readOnly: true } as const;

const REGISTER_FLAGS = {
  ...DATA_FLAGS,
  target: { type: "string" },
  config: { type: "string" },
} as const;

const REGISTER_HELP =
  `Usage: trace external-register --target ID --config FILE|- [--json] [--data-dir DIR] [--db URL]

Binds a target id to a staging config, once and for all. Registering the same
id with an identical config again changes nothing; with a different config it
is refused (exit 2) naming the fields that differ. A retired id is refused
with any config (exit 2): retired ids are not reused. Register a new id for a
new endpoint or configuration. Ids: 1-64 of a-z 0-9 . _ -, starting with a-z or 0-9.
`;

/** `trace external-register`: immutable target registration. */
export const externalRegister: Command = async (args, io) => {
  const { values } = parseFlags("external-register", args, REGISTER_FLAGS);
  if (values.help) return showHelp(io, REGISTER_HELP);
  if (values.target === undefined) {
    throw new UsageError(
      "--target ID is required; see trace external-register --help",
    );
  }
  const targetId = validateTargetId(values.target);
  const config = await requireConfig(values.config, "external-register", io);
  return await withDataContext(values, io, { write: true }, async ({ db }) => {
    const result = await registerNamedTarget(db, targetId, config);
    if (values.json) printJson(io, result);
    else {
      io.out(
        result.created
          ? `registered target ${targetId}  ${config.base_url}\n`
          : `target ${targetId} is already registered with this config; nothing changed\n`,
      );
    }
    return 0;
  });
};

const TARGETS_FLAGS = {
  ...DATA_FLAGS,
  all: { type: "boolean", default: false },
} as const;

const TARGETS_HELP =
  `Usage: trace external-targets [--all] [--json] [--data-dir DIR] [--db URL]

Lists registered targets (explicit registrations and config-derived cfg-…
ids): base URL, how many completed runs each has and when the first and last
were recorded. Retired targets (trace external-retire) are hidden; --all shows
them too, with their retirement, and the targets known only from runs of a
config that was never registered (trace quickstart's in-process demo runs so,
on a new port each time): trace external-runs lists their runs, but with no
stored config they cannot be run, replayed or cleaned up.

--json prints {targets, unregistered}.
`;

/** `trace external-targets`: the registered targets and their use. */
export const externalTargets: Command = async (args, io) => {
  const { values } = parseFlags("external-targets", args, TARGETS_FLAGS);
  if (values.help) return showHelp(io, TARGETS_HELP);
  return await withDataContext(values, io, READ, async ({ db }) => {
    const listing = await targetListing(db, { all: values.all });
    if (values.json) printJson(io, listing);
    else {
      io.out(renderTargets(listing.targets, values.all));
      io.out(renderUnregistered(listing.unregistered, values.all));
    }
    return 0;
  });
};

function renderTargets(targets: TargetSummary[], all: boolean): string {
  if (targets.length === 0) {
    return all
      ? "No targets registered; use trace external-register --target ID --config FILE\n"
      : "No active targets; use trace external-register --target ID --config FILE (--all lists retired ones)\n";
  }
  return renderTable(
    [
      "ID",
      "SOURCE",
      "BASE URL",
      "RUNS",
      // When each run was recorded, at its end (a run's STARTED is earlier).
      "FIRST RECORDED",
      "LAST RECORDED",
      ...(all ? ["RETIRED"] : []),
    ],
    targets.map((t) => [
      t.target_id,
      t.source,
      t.base_url,
      String(t.runs),
      t.first_run_at ?? "-",
      t.last_run_at ?? "-",
      ...(all ? [t.retired?.retired_at ?? "-"] : []),
    ]),
    { align: ["left", "left", "left", "right"] },
  );
}

function renderUnregistered(
  targets: UnregisteredTarget[],
  all: boolean,
): string {
  if (targets.length === 0) return "";
  if (!all) {
    return `(and ${targets.length} unregistered target(s) known only from runs of a config that was never registered, such as trace quickstart's: --all lists them)\n`;
  }
  return "\nUnregistered: known only from their runs (no stored config: they cannot be run, replayed or cleaned up)\n" +
    renderTable(
      ["ID", "BASE URL", "RUNS", "FIRST RECORDED", "LAST RECORDED"],
      targets.map((t) => [
        t.target_id,
        t.base_url,
        String(t.runs),
        t.first_run_at,
        t.last_run_at,
      ]),
      { align: ["left", "left", "right"] },
    );
}

const RETIRE_FLAGS = { ...DATA_FLAGS, reason: { type: "string" } } as const;

const RETIRE_HELP =
  `Usage: trace external-retire TARGET_ID [--reason TEXT] [--json] [--data-dir DIR] [--db URL]

Retires a target: appends a retirement record to the ledger, which hides the
target from trace external-targets (shown with --all) and refuses new runs and
replays against it. Nothing is deleted: its runs, regressions and registration
stay in the ledger, and trace external-cleanup still works for its runs.
Retiring it again changes nothing. A retired id cannot be reused: register the
new endpoint under a new id. --reason (at most 500 characters) is kept with the
retirement and repeated when a run against the target is refused.
`;

/** `trace external-retire`: hide a target and refuse new runs against it. */
export const externalRetire: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-retire",
    args,
    RETIRE_FLAGS,
    { min: 1, max: 1, names: ["TARGET_ID"] },
  );
  if (values.help) return showHelp(io, RETIRE_HELP);
  const targetId = validateTargetId(positionals[0]!);
  return await withDataContext(values, io, {
    write: true,
    existingLedger: true,
  }, async ({ db }) => {
    const result = await retireRunTarget(
      db,
      targetId,
      values.reason ?? null,
    );
    if (values.json) printJson(io, result);
    else {
      io.out(
        result.created
          ? `retired target ${targetId} (ledger entry ${result.retirement.seq}); new runs and replays against it are refused\n`
          : `target ${targetId} was already retired on ${result.retirement.retired_at}; nothing changed\n`,
      );
    }
    return 0;
  });
};

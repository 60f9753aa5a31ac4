/** `trace external-plan` and `trace external-run`. */

import type { StagingConfig } from "../lib/contract/config.ts";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import { NoDataError, type TraceDb } from "../lib/db.ts";
import { UsageError } from "../lib/errors.ts";
import type { TargetRef } from "../lib/runner/report.ts";
import { validateTargetId } from "../lib/ledger/targets.ts";
import { planRun } from "../lib/runner/plan.ts";
import {
  checkAdapterReachable,
  checkConfigToken,
  configTargetRef,
  readRunTarget,
  refuseRetiredConfig,
  runExternalTarget,
  type RunSelection,
} from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { type DataFlags, printJson, withDataContext } from "./_context.ts";
import { loadConfig } from "./_config_input.ts";
import type { Command } from "./_io.ts";
import { renderPlan } from "./_report_text.ts";
import { OUTPUTS_HELP } from "./_outputs.ts";
import { OUTPUT_FLAGS, runContractCommand } from "./_run_outputs.ts";

const PLAN_FLAGS = {
  ...DATA_FLAGS,
  config: { type: "string" },
  target: { type: "string" },
} as const;

const RUN_FLAGS = { ...PLAN_FLAGS, ...OUTPUT_FLAGS } as const;

const PLAN_HELP =
  `Usage: trace external-plan (--target ID | --config FILE|-) [--json] [--data-dir DIR] [--db URL]

Shows what a run would do: namespaces-to-be, operations, timing and request
budget. Sends no request at all and writes nothing. A retired target is
refused, also when --config names the config of one, and so is a config whose
token_env names an environment variable that is unset or empty (as a run
refuses it).
`;

const RUN_HELP =
  `Usage: trace external-run (--target ID | --config FILE|-) [--output FILE|-] [--junit FILE|-]
                          [--summary-md FILE|-] [--html FILE|-] [--force] [--json]
                          [--data-dir DIR] [--db URL]

Ingests synthetic canaries into the staging adapter, warms its caches,
deletes, samples every store through the deletion window, cleans up, and
prints PASS / FAIL / INCONCLUSIVE with evidence. The report is appended to the
ledger. --target names a registered target (trace external-register); --config
registers the config under a deterministic id (cfg-…) and runs it.

${OUTPUTS_HELP}
Ctrl-C (or SIGTERM) stops the window early: the run still cleans up and is
recorded INCONCLUSIVE (interrupted), all within the smaller of the window and
30 s of the Ctrl-C, as the progress line says. A request in flight is called
off once that bound has passed (an ingest called off counts as unconfirmed, and
cleanup as incomplete), and cleanup polls only for what is left of it (when
nothing is, it still sends its deletions and polls once, 1 s per request). A
second Ctrl-C exits at once with code 130 and prints the trace
external-cleanup command for what may remain.

Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a usage/config error (also
instead of 0 when a result could not be kept: the report is then only on
stdout), 130 after a second Ctrl-C.
`;

function targetOrConfig(
  values: { target?: string | undefined; config?: string | undefined },
  command: string,
): { target: string } | { config: string } {
  if (values.target !== undefined && values.config !== undefined) {
    throw new UsageError(
      `Give either --target ID or --config FILE, not both; see trace ${command} --help`,
    );
  }
  if (values.target !== undefined) {
    return { target: validateTargetId(values.target) };
  }
  if (values.config !== undefined) return { config: values.config };
  throw new UsageError(
    `--target ID or --config FILE (or - for stdin) is required; see trace ${command} --help`,
  );
}

/** `trace external-plan`: the dry run. */
export const externalPlan: Command = async (args, io) => {
  const { values } = parseFlags("external-plan", args, PLAN_FLAGS);
  if (values.help) return showHelp(io, PLAN_HELP);
  const choice = targetOrConfig(values, "external-plan");
  const { config, target } = "target" in choice
    ? await withDataContext(
      values,
      io,
      { write: false, readOnly: true },
      ({ db }) => readRunTarget(db, choice.target),
    )
    : await configPlanTarget(values, choice.config, io);
  // What a run would refuse before sending anything, a plan refuses too.
  checkConfigToken(config, io.env, target);
  const plan = planRun(config, target);
  if (values.json) printJson(io, plan);
  else io.out(renderPlan(plan));
  return 0;
};

/** `trace external-run`: one deletion contract run. */
export const externalRun: Command = async (args, io) => {
  const { values } = parseFlags("external-run", args, RUN_FLAGS);
  if (values.help) return showHelp(io, RUN_HELP);
  const choice = targetOrConfig(values, "external-run");
  return await runContractCommand(io, {
    values,
    prepare: () => selectRun(values, choice, io),
    start: async (db, hooks, selection) => ({
      ...await runExternalTarget(db, selection, {
        ...hooks,
        onRegistered: (target) =>
          io.err(`target: registered ${target.id} from the config\n`),
      }),
      regression: null,
    }),
  });
};

/** What a run is aimed at, checked as far as it can be before anything is written. */
async function selectRun(
  values: DataFlags,
  choice: { target: string } | { config: string },
  io: Parameters<Command>[1],
): Promise<RunSelection> {
  if ("config" in choice) {
    const config = await loadConfig(choice.config, io);
    await checkAdapterBeforeCreating(values, io, config);
    return { config };
  }
  // A registered target lives in an existing database: a wrong --data-dir
  // is said as such, and no empty database is left behind.
  await withDataContext(
    values,
    io,
    { write: false, readOnly: true },
    ({ db }) => readRunTarget(db, choice.target),
  );
  return { targetId: choice.target };
}

/**
 * A config run into a data directory that holds no database yet checks its
 * adapter before creating one: such a database has retired nothing (the
 * check the run makes first otherwise), and a run that cannot start must
 * not leave a new `trace.db` behind. The run checks again on its own
 * transport.
 */
async function checkAdapterBeforeCreating(
  values: DataFlags,
  io: Parameters<Command>[1],
  config: StagingConfig,
): Promise<void> {
  if (await withExistingData(values, io, () => Promise.resolve())) return;
  const transport = createHttpTransport(config, { env: io.env });
  const signal = io.interrupted;
  try {
    await checkAdapterReachable(config, transport, signal ? { signal } : {});
  } finally {
    await transport.close?.();
  }
}

/**
 * A config file's plan target: its config-derived id, not registered (a
 * plan writes nothing), refused when that id was retired. No database at
 * all has retired nothing.
 */
async function configPlanTarget(
  values: DataFlags,
  path: string,
  io: Parameters<Command>[1],
): Promise<{ config: StagingConfig; target: TargetRef }> {
  const config = await loadConfig(path, io);
  await withExistingData(
    values,
    io,
    (db) => refuseRetiredConfig(db, config, "plan"),
  );
  return { config, target: configTargetRef(config) };
}

/**
 * Runs `read` on the database, opened read-only, when there is one; `false`
 * when there is none yet. Opening without creating finds it wherever --db,
 * the environment or --data-dir put it, as a run will.
 */
async function withExistingData(
  values: DataFlags,
  io: Parameters<Command>[1],
  read: (db: TraceDb) => Promise<void>,
): Promise<boolean> {
  try {
    await withDataContext(
      values,
      io,
      { write: false, readOnly: true },
      ({ db }) => read(db),
    );
    return true;
  } catch (error) {
    if (error instanceof NoDataError) return false;
    throw error;
  }
}

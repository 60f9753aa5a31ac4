/**
 * Saved regressions: `external-save`, `external-replay`,
 * `external-regressions` and `external-gate`.
 *
 * @module
 */

import { displaySafe } from "../lib/display.ts";
import type { GateResult } from "../lib/ledger/regressions.ts";
import {
  gate,
  type ListedRegression,
  regressionsOf,
  replayRegression,
  saveRun,
  type UnfinishedReplayView,
} from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";
import { OUTPUTS_HELP } from "./_outputs.ts";
import { renderTable } from "./_table.ts";
import {
  dataFlagsOf,
  OUTPUT_FLAGS,
  runContractCommand,
} from "./_run_outputs.ts";

// ---------------------------------------------------------------- save

const SAVE_HELP =
  `Usage: trace external-save RUN_ID [--json] [--data-dir DIR] [--db URL]

Saves a completed FAIL run as a regression. The definition pins the target and
its config digest, the protocol revision, timing, document count and the failed
assertions. It starts pending (a known, open bug); its first PASS replay makes
it enforced. Any other run (PASS, INCONCLUSIVE, running, interrupted) is refused.
`;

/** `trace external-save`: a completed FAIL becomes a saved regression. */
export const externalSave: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-save",
    args,
    DATA_FLAGS,
    { min: 1, max: 1, names: ["RUN_ID"] },
  );
  if (values.help) return showHelp(io, SAVE_HELP);
  const runId = positionals[0]!;
  return await withDataContext(
    values,
    io,
    { write: true, existingLedger: true },
    async ({ db, dataDir }) => {
      const result = await saveRun(db, runId, { dataDir });
      const id = result.regression.regression_id;
      if (values.json) printJson(io, result);
      else {
        io.out(
          `${
            result.created ? "saved" : "already saved:"
          } run ${runId} as regression ${id} (${result.regression.status})\n` +
            `after you fix the application, replay it with: trace external-replay ${id}${
              dataFlagsOf(values)
            }\n`,
        );
      }
      return 0;
    },
  );
};

// ---------------------------------------------------------------- replay

const REPLAY_FLAGS = { ...DATA_FLAGS, ...OUTPUT_FLAGS } as const;

const REPLAY_HELP =
  `Usage: trace external-replay REGRESSION_ID [--output FILE|-] [--junit FILE|-] [--summary-md FILE|-]
                             [--html FILE|-] [--force] [--json] [--data-dir DIR] [--db URL]

Runs fresh synthetic data through the same lifecycle against the registered
target, under the pinned contract. Refused before any request when the target
config, protocol revision or contract drifted from the definition. The first
PASS replay makes a pending regression enforced; after that a FAIL replay is a
real regression. A PASS does not prove that records leaked earlier were cleaned.

${OUTPUTS_HELP}
Ctrl-C stops it as it stops trace external-run; a second Ctrl-C exits at once
with code 130 and prints the trace external-cleanup command.

Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a refused/usage error, 130
after a second Ctrl-C.
`;

/** `trace external-replay`: replays a saved regression. */
export const externalReplay: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-replay",
    args,
    REPLAY_FLAGS,
    { min: 1, max: 1, names: ["REGRESSION_ID"] },
  );
  if (values.help) return showHelp(io, REPLAY_HELP);
  const regressionId = positionals[0]!;
  return await runContractCommand(io, {
    values,
    prepare: () => Promise.resolve(regressionId),
    start: (db, hooks, id) => replayRegression(db, id, hooks),
    existingLedger: true,
  });
};

// ---------------------------------------------------------------- regressions

const LIST_FLAGS = { ...DATA_FLAGS, target: { type: "string" } } as const;

/** Readers open the database read-only. */
const READ = { write: false, readOnly: true } as const;

const REGRESSIONS_HELP =
  `Usage: trace external-regressions [--target ID] [--json] [--data-dir DIR] [--db URL]

Lists saved regressions with their status (pending or enforced), the result of
their latest replay and the number of recorded replays. A replay that never
finished (killed, or still running) and started after the latest one the ledger
holds is the latest replay, as trace external-gate judges it: its row shows
"(did not finish)" or "(running)" and that run, and a line under the table says
what to do (trace external-cleanup RUN_ID, then replay again). An unknown
--target is refused.
`;

/** `trace external-regressions`: saved regressions with status and last result. */
export const externalRegressions: Command = async (args, io) => {
  const { values } = parseFlags("external-regressions", args, LIST_FLAGS);
  if (values.help) return showHelp(io, REGRESSIONS_HELP);
  return await withDataContext(
    values,
    io,
    READ,
    async ({ db, dataDir }) => {
      const regressions = await regressionsOf(db, values.target, { dataDir });
      if (values.json) printJson(io, { regressions });
      else io.out(renderRegressions(regressions, dataFlagsOf(values)));
      return 0;
    },
  );
};

function renderRegressions(
  regressions: ListedRegression[],
  dataFlags: string,
): string {
  if (regressions.length === 0) {
    return "No saved regressions; save a failing run with trace external-save RUN_ID\n";
  }
  // The latest replay is the one the gate judges: an unfinished one when it
  // started after the ledger's latest, which the note under the table names.
  const table = renderTable(
    ["ID", "TARGET", "STATUS", "LAST RESULT", "REPLAYS", "LAST RUN"],
    regressions.map((r) => [
      r.regression_id,
      r.target_id,
      r.status,
      r.unfinished_replay
        ? (r.unfinished_replay.running ? "(running)" : "(did not finish)")
        : r.last_result ?? "(never replayed)",
      String(r.replays),
      r.unfinished_replay?.run_id ?? r.last_run_id ?? "-",
    ]),
  );
  const notes = regressions.flatMap((r) =>
    r.unfinished_replay
      ? [unfinishedNote(r, r.unfinished_replay, dataFlags)]
      : []
  );
  return table + notes.map((note) => `${displaySafe(note)}\n`).join("");
}

function unfinishedNote(
  regression: ListedRegression,
  replay: UnfinishedReplayView,
  dataFlags: string,
): string {
  const { run_id: run, started_at: started } = replay;
  const recorded = regression.last_run_id === null
    ? ""
    : `; the latest recorded one, ${regression.last_run_id}, was ${regression.last_result}`;
  return replay.running
    ? `${regression.regression_id}: latest replay ${run} is running (started ${started}${recorded}); list again once it has finished`
    : `${regression.regression_id}: latest replay ${run} did not finish (started ${started}${recorded}); trace external-cleanup ${run}${dataFlags}, then replay again with trace external-replay ${regression.regression_id}${dataFlags}`;
}

// ---------------------------------------------------------------- gate

const GATE_HELP =
  `Usage: trace external-gate [--target ID] [--json] [--data-dir DIR] [--db URL]

Exits 0 only when every enforced regression's latest replay passed; otherwise
exits 1 and names the ones that did not (INCONCLUSIVE counts as not passed),
each with what its replay showed: the saved failure recurred, it failed on
something else, or it cannot tell (in --json: recurrence).
A replay that never finished (killed, or still running) and started after the
latest one the ledger holds is that regression's latest: its checkpoint in the
data directory names the regression, so it exits 1 too, naming the run and what
to do (trace external-cleanup RUN_ID, then replay again), until a later replay
completes. Pending regressions are known open bugs: listed, but they do not
block. With no enforced regression yet (but runs recorded) it passes and says
so: nothing is known to be fixed, so nothing can have come back.

The whole ledger is verified first, and the gate prints the head it judged
(SEQ:sha256:…): keep it in the CI log and check later with
trace ledger verify --expect-head HEAD. It never passes vacuously: no data
directory, no ledger, a ledger without a single external run, a broken
ledger, an unknown --target or a target without a run exit 2, and so does a
completed run that the ledger lacks (its checkpoint in the data directory says
it finished: a failed write, a stopped process or removed entries).
`;

/** `trace external-gate`: CI gate over enforced regressions. */
export const externalGate: Command = async (args, io) => {
  const { values } = parseFlags("external-gate", args, LIST_FLAGS);
  if (values.help) return showHelp(io, GATE_HELP);
  return await withDataContext(values, io, READ, async ({ db, dataDir }) => {
    const result = await gate(db, values.target, {
      requireRuns: true,
      dataDir,
      commandFlags: dataFlagsOf(values),
    });
    if (values.json) printJson(io, result);
    else io.out(renderGate(result));
    return result.ok ? 0 : 1;
  });
};

function renderGate(gate: GateResult): string {
  const scope = gate.target_id ? ` for target ${gate.target_id}` : "";
  const lines = [
    !gate.ok
      ? `gate FAILED${scope}: ${gate.failing.length} of ${gate.enforced} enforced regression(s) did not pass their latest replay`
      : gate.enforced === 0
      ? `gate passed${scope}: no enforced regression yet, so nothing can have come back (a regression is enforced by its first PASS replay)`
      : `gate passed${scope}: ${gate.enforced} enforced regression(s), every latest replay passed`,
    ...gate.failing.map((f) =>
      `  ${f.regression_id} (${f.target_id}): ${f.reason}`
    ),
  ];
  if (gate.pending > 0) {
    lines.push(
      `${gate.pending} pending regression(s) (open bugs, not blocking): ${
        gate.pending_regressions.join(", ")
      }`,
    );
  }
  if (gate.ledger_head) {
    lines.push(
      `ledger head ${gate.ledger_head.head} (${gate.ledger_head.entries} entr${
        gate.ledger_head.entries === 1 ? "y" : "ies"
      }, verified; check later with trace ledger verify --expect-head ${gate.ledger_head.head})`,
    );
  }
  return lines.join("\n") + "\n";
}

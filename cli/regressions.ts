/**
 * The ledger workflow: `external-register`, `external-targets`,
 * `external-save`, `external-replay`, `external-compare`, `external-show`,
 * `external-regressions` and `external-gate`.
 *
 * @module
 */

import { appliedVersions } from "../lib/db.ts";
import { NotFoundError, UsageError } from "../lib/errors.ts";
import { compareRuns, type RunComparison } from "../lib/ledger/compare.ts";
import {
  gateRegressions,
  type GateResult,
  listRegressions,
  type RegressionView,
  saveRegression,
} from "../lib/ledger/regressions.ts";
import { replayRegression } from "../lib/ledger/replay.ts";
import { type RunView, viewRun } from "../lib/ledger/run_view.ts";
import { readRun } from "../lib/ledger/runs.ts";
import { requireLedger } from "../lib/ledger/schema.ts";
import {
  listTargets,
  registerTarget,
  type TargetRecord,
  validateTargetId,
} from "../lib/ledger/targets.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { type DataContext, printJson, withDataContext } from "./_context.ts";
import type { CliIo, Command } from "./_io.ts";
import { progressRenderer } from "./_progress.ts";
import { renderReport } from "./_report_text.ts";
import {
  dataFlagsOf,
  exitCodeOf,
  OUTPUT_FLAGS,
  replayCommandOf,
  requireConfig,
  reserveOutputs,
  writeRunOutputs,
} from "./external.ts";

type DataValues = { "data-dir"?: string | undefined; db?: string | undefined };

/** Runs `fn` against an existing ledger, read-only. */
async function withLedger<T>(
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

/** Left-aligned text table. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length))
  );
  const format = (row: string[]) =>
    row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  return [format(header), ...rows.map(format)].join("\n") + "\n";
}

// ---------------------------------------------------------------- register

const REGISTER_FLAGS = {
  ...DATA_FLAGS,
  target: { type: "string" },
  config: { type: "string" },
} as const;

const REGISTER_HELP =
  `Usage: trace external-register --target ID --config FILE|- [--json] [--data-dir DIR] [--db URL]

Binds a target id to a staging config, once and for all. Registering the same
id with an identical config again changes nothing; with a different config it
is refused (exit 2) naming the fields that differ. Register a new id for a new
endpoint or configuration. Ids: 1-64 of a-z 0-9 . _ -, starting with a-z or 0-9.
`;

/** `trace external-register`: immutable target registration. */
export const externalRegister: Command = async (args, io) => {
  const { values } = parseFlags("external-register", args, REGISTER_FLAGS);
  if (values.help) return showHelp(io, REGISTER_HELP);
  if (values.target === undefined) {
    throw new UsageError(
      "external-register: --target ID is required; see trace external-register --help",
    );
  }
  const id = validateTargetId(values.target);
  const config = await requireConfig(values.config, "external-register", io);
  return await withDataContext(values, io, { write: true }, async ({ db }) => {
    const result = await registerTarget(db, id, config, "registered");
    if (values.json) printJson(io, result);
    else {
      io.out(
        result.created
          ? `registered target ${id}  ${config.base_url}\n`
          : `target ${id} is already registered with this config; nothing changed\n`,
      );
    }
    return 0;
  });
};

// ---------------------------------------------------------------- targets

const TARGETS_HELP =
  `Usage: trace external-targets [--json] [--data-dir DIR] [--db URL]

Lists registered targets (explicit registrations and config-derived cfg-… ids).
`;

/** `trace external-targets`: the registered targets. */
export const externalTargets: Command = async (args, io) => {
  const { values } = parseFlags("external-targets", args, DATA_FLAGS);
  if (values.help) return showHelp(io, TARGETS_HELP);
  return await withDataContext(values, io, { write: false }, async ({ db }) => {
    const hasLedger = (await appliedVersions(db)).has("ledger");
    if (hasLedger) await requireLedger(db);
    const targets = hasLedger ? await listTargets(db) : [];
    if (values.json) printJson(io, { targets });
    else io.out(renderTargets(targets));
    return 0;
  });
};

function renderTargets(targets: TargetRecord[]): string {
  if (targets.length === 0) {
    return "No targets registered; use trace external-register --target ID --config FILE\n";
  }
  return table(
    ["ID", "SOURCE", "BASE URL", "DOCS", "WINDOW", "REGISTERED"],
    targets.map((t) => [
      t.target_id,
      t.source,
      t.base_url,
      String(t.config.document_count),
      `${t.config.deletion_window_seconds} s`,
      t.created_at,
    ]),
  );
}

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
    {
      min: 1,
      max: 1,
    },
  );
  if (values.help) return showHelp(io, SAVE_HELP);
  const runId = positionals[0]!;
  return await withDataContext(
    values,
    io,
    { write: true },
    async ({ db, dataDir }) => {
      const result = await saveRegression(db, runId, { dataDir });
      const id = result.regression.regression_id;
      if (values.json) printJson(io, result);
      else {
        io.out(
          `${
            result.created ? "saved" : "already saved:"
          } run ${runId} as regression ${id} (${result.regression.status})\n` +
            `replay it with: trace external-replay ${id}${
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
  `Usage: trace external-replay REGRESSION_ID [--output FILE] [--junit FILE] [--summary-md FILE]
                             [--json] [--data-dir DIR] [--db URL]

Runs fresh synthetic data through the same lifecycle against the registered
target, under the pinned contract. Refused before any request when the target
config, protocol revision or contract drifted from the definition. The first
PASS replay makes a pending regression enforced; after that a FAIL replay is a
real regression. A PASS does not prove that records leaked earlier were cleaned.

Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a refused/usage error.
`;

/** `trace external-replay`: replays a saved regression. */
export const externalReplay: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-replay",
    args,
    REPLAY_FLAGS,
    { min: 1, max: 1 },
  );
  if (values.help) return showHelp(io, REPLAY_HELP);
  const regressionId = positionals[0]!;
  const outputs = await reserveOutputs(values);
  let written = false;
  try {
    return await withDataContext(
      values,
      io,
      { write: true },
      async ({ db, dataDir }) => {
        const { report, regression } = await replayRegression(
          db,
          regressionId,
          {
            dataDir,
            env: io.env,
            onStart: ({ checkpointPath }) =>
              io.err(`checkpoint: ${checkpointPath}\n`),
            onEvent: progressRenderer(io),
            onWarning: (message: string) => io.err(`warning: ${message}\n`),
            ...(io.interrupted ? { signal: io.interrupted } : {}),
          },
        );
        io.err(
          `ledger: replay ${report.run_id} of ${regressionId} recorded in ${
            db.path ?? db.url
          }\n`,
        );
        written = true;
        await writeRunOutputs(report, outputs, {
          replayCommand: replayCommandOf(report, regressionId, values),
          regressionId,
        }, io);
        if (values.json) printJson(io, { regression, report });
        else io.out(renderReport(report) + lifecycleLine(regression, report));
        return exitCodeOf(report);
      },
    );
  } finally {
    if (!written) await outputs.release();
  }
};

function lifecycleLine(regression: RegressionView, report: RunReport): string {
  const id = regression.regression_id;
  if (regression.status === "pending") {
    return `\nRegression ${id}: pending (the bug is still open; a PASS replay will enforce it)\n`;
  }
  if (report.verdict === "PASS") {
    return `\nRegression ${id}: enforced (from now on a failing replay is a real regression)\n`;
  }
  return `\nRegression ${id}: enforced and this replay did not pass: the bug is back (${report.verdict})\n`;
}

// ---------------------------------------------------------------- compare

const COMPARE_HELP =
  `Usage: trace external-compare RUN_A RUN_B [--json] [--data-dir DIR] [--db URL]

Compares two completed runs of the same target under the same contract
(typically the failing run and its replay): both verdicts, findings fixed /
still present / new, and both cleanup outcomes. Refuses runs of different
targets, configs or contracts.
`;

/** `trace external-compare`: before and after. */
export const externalCompare: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-compare",
    args,
    DATA_FLAGS,
    { min: 2, max: 2 },
  );
  if (values.help) return showHelp(io, COMPARE_HELP);
  return await withLedger(values, io, async ({ db }) => {
    const [a, b] = await Promise.all(
      positionals.map(async (runId) => {
        const report = await readRun(db, runId);
        if (!report || report.kind !== "external") {
          throw new NotFoundError(
            `Cannot compare: no completed external run ${runId} in the ledger; see trace external-show ${runId}`,
          );
        }
        return report;
      }),
    );
    const comparison = compareRuns(a!, b!);
    if (values.json) printJson(io, comparison);
    else io.out(renderComparison(comparison));
    return 0;
  });
};

function renderComparison(c: RunComparison): string {
  const keys = (list: RunComparison["findings"]["fixed"]) =>
    list.length === 0
      ? ["    (none)"]
      : list.map((f) => `    ${f.code} on ${f.subject}: ${f.message}`);
  const cleanup = (side: RunComparison["cleanup"]["a"]) =>
    side.cleanup_complete
      ? "complete"
      : `INCOMPLETE: ${side.problems.join("; ") || "synthetic records remain"}`;
  return [
    `Compare on target ${c.target_id} (${c.contract.protocol_revision}, ${c.contract.document_count} document(s), window ${c.contract.deletion_window_seconds} s)`,
    `  A  ${c.a.verdict.padEnd(12)} ${c.a.run_id}  ${c.a.started_at}`,
    `  B  ${c.b.verdict.padEnd(12)} ${c.b.run_id}  ${c.b.started_at}`,
    "",
    "Findings",
    "  fixed (in A, not in B)",
    ...keys(c.findings.fixed),
    "  still present (in both)",
    ...keys(c.findings.still_present),
    "  new (in B only)",
    ...keys(c.findings.new),
    "",
    "Cleanup",
    `  A  ${cleanup(c.cleanup.a)}`,
    `  B  ${cleanup(c.cleanup.b)}`,
    "",
    `Note: ${c.caveat}`,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------- show

const SHOW_HELP =
  `Usage: trace external-show RUN_ID [--json] [--data-dir DIR] [--db URL]

Shows a run: the completed report from the ledger, or, for a run without one,
its checkpoint: running while its process is alive on this host, otherwise
interrupted (INCONCLUSIVE, never PASS) with the ids it issued.

Exit codes follow the verdict: 0 PASS, 1 FAIL, 2 INCONCLUSIVE (also running
and interrupted runs).
`;

/** `trace external-show`: one run, completed, running or interrupted. */
export const externalShow: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-show",
    args,
    DATA_FLAGS,
    {
      min: 1,
      max: 1,
    },
  );
  if (values.help) return showHelp(io, SHOW_HELP);
  return await withDataContext(
    values,
    io,
    { write: false },
    async ({ db, dataDir }) => {
      const hasLedger = (await appliedVersions(db)).has("ledger");
      if (hasLedger) await requireLedger(db);
      const view = await viewRun(db, positionals[0]!, {
        dataDir,
        ledger: hasLedger,
      });
      if (values.json) printJson(io, view);
      else io.out(renderView(view));
      return view.verdict === "PASS" ? 0 : view.verdict === "FAIL" ? 1 : 2;
    },
  );
};

function renderView(view: RunView): string {
  const replay = view.regression_id
    ? `Replay of regression ${view.regression_id}\n`
    : "";
  if (view.report) return replay + renderReport(view.report);
  const c = view.checkpoint!;
  return [
    `${view.verdict}  ${view.run_id}  (${view.state})`,
    `  target   ${view.target.id}  ${view.target.base_url}`,
    `  started  ${view.started_at}, last checkpoint ${c.updated_at}, pid ${c.pid}`,
    `  namespaces ${c.namespaces.test} and ${c.namespaces.control}`,
    `  issued test ids: ${c.issued.test.join(", ") || "(none)"}`,
    `  issued control ids: ${c.issued.control.join(", ") || "(none)"}`,
    "",
    view.note ?? "",
    "",
  ].join("\n");
}

// ---------------------------------------------------------------- regressions

const LIST_FLAGS = { ...DATA_FLAGS, target: { type: "string" } } as const;

const REGRESSIONS_HELP =
  `Usage: trace external-regressions [--target ID] [--json] [--data-dir DIR] [--db URL]

Lists saved regressions with their status (pending or enforced), the result of
their latest replay and the number of replays.
`;

/** `trace external-regressions`: saved regressions with status and last result. */
export const externalRegressions: Command = async (args, io) => {
  const { values } = parseFlags("external-regressions", args, LIST_FLAGS);
  if (values.help) return showHelp(io, REGRESSIONS_HELP);
  const target = values.target === undefined
    ? undefined
    : validateTargetId(values.target);
  return await withLedger(values, io, async ({ db }) => {
    const regressions = await listRegressions(db, target);
    if (values.json) printJson(io, { regressions });
    else io.out(renderRegressions(regressions));
    return 0;
  });
};

function renderRegressions(regressions: RegressionView[]): string {
  if (regressions.length === 0) {
    return "No saved regressions; save a failing run with trace external-save RUN_ID\n";
  }
  return table(
    ["ID", "TARGET", "STATUS", "LAST RESULT", "REPLAYS", "LAST RUN"],
    regressions.map((r) => [
      r.regression_id,
      r.target_id,
      r.status,
      r.last_result ?? "(never replayed)",
      String(r.replays),
      r.last_run_id ?? "-",
    ]),
  );
}

// ---------------------------------------------------------------- gate

const GATE_HELP =
  `Usage: trace external-gate [--target ID] [--json] [--data-dir DIR] [--db URL]

Exits 0 only when every enforced regression's latest replay passed; otherwise
exits 1 and names the ones that did not (INCONCLUSIVE counts as not passed).
Pending regressions are known open bugs: listed, but they do not block.
`;

/** `trace external-gate`: CI gate over enforced regressions. */
export const externalGate: Command = async (args, io) => {
  const { values } = parseFlags("external-gate", args, LIST_FLAGS);
  if (values.help) return showHelp(io, GATE_HELP);
  const target = values.target === undefined
    ? undefined
    : validateTargetId(values.target);
  return await withLedger(values, io, async ({ db }) => {
    const gate = gateRegressions(
      await listRegressions(db, target),
      target ?? null,
    );
    if (values.json) printJson(io, gate);
    else io.out(renderGate(gate));
    return gate.ok ? 0 : 1;
  });
};

function renderGate(gate: GateResult): string {
  const scope = gate.target_id ? ` for target ${gate.target_id}` : "";
  const lines = [
    gate.ok
      ? `gate passed${scope}: ${gate.enforced} enforced regression(s), every latest replay passed`
      : `gate FAILED${scope}: ${gate.failing.length} of ${gate.enforced} enforced regression(s) did not pass their latest replay`,
    ...gate.failing.map((f) =>
      `  ${f.regression_id} (${f.target_id}): latest replay ${
        f.last_run_id ?? "-"
      } was ${f.last_result ?? "missing"}`
    ),
  ];
  if (gate.pending > 0) {
    lines.push(
      `${gate.pending} pending regression(s) (open bugs, not blocking): ${
        gate.pending_regressions.join(", ")
      }`,
    );
  }
  return lines.join("\n") + "\n";
}

#!/usr/bin/env -S deno run -A
/**
 * The `trace` command. Parses the subcommand, lazily loads its implementation
 * from `cli/`, and owns the mapping from errors to exit codes.
 *
 * @module
 */

import { type CliIo, type Command, processIo } from "./cli/_io.ts";
import { errorMessage, TraceError } from "./lib/errors.ts";

/** Exit codes: 0 PASS, 1 FAIL (or a broken ledger), 2 INCONCLUSIVE or usage/config error. */
export const EXIT = { pass: 0, fail: 1, inconclusive: 2, usage: 2 } as const;

interface CommandEntry {
  summary: string;
  load: () => Promise<Command>;
}

const COMMANDS: Record<string, CommandEntry> = {
  quickstart: {
    summary:
      "Run the demo app healthy and with a defect, and show both verdicts",
    load: async () => (await import("./cli/quickstart.ts")).quickstart,
  },
  demo: {
    summary: "Serve the demo staging app (optionally with --defect NAME)",
    load: async () => (await import("./cli/demo.ts")).demo,
  },
  "external-plan": {
    summary:
      "Show what a deletion contract run would do, without any network request",
    load: async () => (await import("./cli/external.ts")).externalPlan,
  },
  "external-run": {
    summary: "Run the deletion contract against a staging adapter",
    load: async () => (await import("./cli/external.ts")).externalRun,
  },
  "external-register": {
    summary: "Register a staging target under an id (immutable)",
    load: async () => (await import("./cli/targets.ts")).externalRegister,
  },
  "external-targets": {
    summary: "List registered targets",
    load: async () => (await import("./cli/targets.ts")).externalTargets,
  },
  "external-save": {
    summary: "Save a completed FAIL run as a regression",
    load: async () => (await import("./cli/regressions.ts")).externalSave,
  },
  "external-replay": {
    summary: "Replay a saved regression with fresh synthetic data",
    load: async () => (await import("./cli/regressions.ts")).externalReplay,
  },
  "external-compare": {
    summary: "Compare two runs of the same target and contract",
    load: async () => (await import("./cli/runs.ts")).externalCompare,
  },
  "external-show": {
    summary: "Show a run (completed, running or interrupted)",
    load: async () => (await import("./cli/runs.ts")).externalShow,
  },
  "external-regressions": {
    summary: "List saved regressions with status and last result",
    load: async () =>
      (await import("./cli/regressions.ts")).externalRegressions,
  },
  "external-gate": {
    summary:
      "Exit 0 only when every enforced regression's latest replay passed",
    load: async () => (await import("./cli/regressions.ts")).externalGate,
  },
  reference: {
    summary: "Run and rank the reference systems with known deletion behaviour",
    load: async () => (await import("./cli/reference.ts")).reference,
  },
  events: {
    summary: "Ingest, query, summarize and export observability events",
    load: async () => (await import("./cli/events.ts")).events,
  },
  obs: {
    summary:
      "Index maintenance: init, backfill, parity, retention, expiry, health",
    load: async () => (await import("./cli/obs.ts")).obs,
  },
  serve: {
    summary: "Serve the ingest and query API on localhost",
    load: async () => (await import("./cli/serve.ts")).serve,
  },
  ledger: {
    summary: "Verify the ledger's digests and chain (ledger verify)",
    load: async () => (await import("./cli/ledger.ts")).ledger,
  },
};

function printUsage(io: CliIo): void {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, entry]) =>
    `  ${name.padEnd(width)}  ${entry.summary}`
  );
  io.out(
    [
      "trace: prove that an AI-memory or RAG application really forgets",
      "",
      "Usage: trace <command> [options]   (trace <command> --help for details)",
      "",
      "Commands:",
      ...lines,
      "",
      "Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a usage/config error",
      "",
    ].join("\n"),
  );
}

/** Maps a thrown error to its exit code (the one place that does). */
export function exitCodeFor(error: unknown): number {
  if (error instanceof TraceError && error.code === "ledger_integrity") {
    return EXIT.fail;
  }
  return EXIT.usage;
}

/** Runs the CLI with `args`; returns the exit code instead of exiting. */
export async function main(
  args: string[],
  io: CliIo = processIo(),
): Promise<number> {
  const [name, ...rest] = args;
  if (
    name === undefined || name === "help" || name === "--help" || name === "-h"
  ) {
    printUsage(io);
    return name === undefined ? EXIT.usage : 0;
  }
  if (name === "--version" || name === "version") {
    io.out("trace 0.1.0\n");
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    io.err(`trace: unknown command "${name}"; run trace --help for the list\n`);
    return EXIT.usage;
  }
  try {
    const command = await entry.load();
    return await command(rest, io);
  } catch (error) {
    io.err(`trace ${name}: ${errorMessage(error)}\n`);
    return exitCodeFor(error);
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));

#!/usr/bin/env -S deno run -A
/**
 * The `trace` command: one grammar, `trace <command>` or
 * `trace <group> <command>`, and one dispatcher. Each command lazily loads
 * its implementation from `cli/`; this file owns the help around them and
 * the mapping from errors to exit codes.
 *
 * The seed's hyphenated spellings (`external-run`, `external-show`, …) are the
 * same commands as `external run`, `external show`: `group-command` is read
 * as `group command` for every group.
 *
 * @module
 */

import { jsonError, printJson } from "./cli/_json.ts";
import { type CliIo, type Command, processIo } from "./cli/_io.ts";
import { closestName } from "./lib/suggest.ts";
import { terminalSafe } from "./lib/display.ts";
import { tableLines } from "./cli/_table.ts";
import type { Subcommand } from "./cli/reference.ts";
import { errorMessage, UsageError } from "./lib/errors.ts";
import { explainSqlite } from "./lib/sqlite_errors.ts";
import { clipValue, quoteValue } from "./lib/echo.ts";

/** Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE, a usage/config error or a refusal (a broken ledger too). */
export const EXIT = { pass: 0, fail: 1, inconclusive: 2, usage: 2 } as const;

const VERSION = "0.1.0";

interface Leaf {
  summary: string;
  load: () => Promise<Command>;
}

interface Group {
  summary: string;
  /** A paragraph shown under the group's usage line. */
  about?: string;
  commands: Record<string, Leaf>;
}

type Entry = Leaf | Group;

const external = () => import("./cli/external.ts");
const targets = () => import("./cli/targets.ts");
const regressions = () => import("./cli/regressions.ts");
const runs = () => import("./cli/runs.ts");
const obs = () => import("./cli/obs.ts");
const events = () => import("./cli/events.ts");
const reference = async (sub: Subcommand) =>
  (await import("./cli/reference.ts")).referenceSubcommand(sub);
const ledger = () => import("./cli/ledger.ts");
const audit = () => import("./cli/audit.ts");

const COMMANDS: Record<string, Entry> = {
  quickstart: {
    summary:
      "Run the demo app healthy and with a defect, and show both verdicts",
    load: async () => (await import("./cli/quickstart.ts")).quickstart,
  },
  init: {
    summary: "Write a commented starter config for your staging adapter",
    load: async () => (await import("./cli/init.ts")).init,
  },
  demo: {
    summary: "Serve the demo staging app (optionally with --defect NAME)",
    load: async () => (await import("./cli/demo.ts")).demo,
  },
  serve: {
    summary: "Serve the ingest and query API on localhost",
    load: async () => (await import("./cli/serve.ts")).serve,
  },
  mcp: {
    summary: "Serve the MCP tools over stdio for an assistant",
    load: async () => (await import("./cli/mcp.ts")).mcp,
  },
  "mcp-config": {
    summary: "Print MCP client configurations that launch trace mcp",
    load: async () => (await import("./cli/mcp_config.ts")).mcpConfig,
  },
  external: {
    summary: "Deletion contract runs against your staging adapter",
    commands: {
      plan: {
        summary: "Show what a run would do, without any network request",
        load: async () => (await external()).externalPlan,
      },
      run: {
        summary: "Run the deletion contract against a staging adapter",
        load: async () => (await external()).externalRun,
      },
      register: {
        summary: "Register a staging target under an id (immutable)",
        load: async () => (await targets()).externalRegister,
      },
      targets: {
        summary: "List registered targets with their runs (--all: retired too)",
        load: async () => (await targets()).externalTargets,
      },
      save: {
        summary: "Save a completed FAIL run as a regression",
        load: async () => (await regressions()).externalSave,
      },
      replay: {
        summary: "Replay a saved regression with fresh synthetic data",
        load: async () => (await regressions()).externalReplay,
      },
      compare: {
        summary: "Compare two runs of the same target and contract",
        load: async () => (await runs()).externalCompare,
      },
      show: {
        summary: "Show a run (completed, running or interrupted)",
        load: async () => (await runs()).externalShow,
      },
      runs: {
        summary:
          "List runs, newest first (filter by target, verdict, kind, state)",
        load: async () => (await runs()).externalRuns,
      },
      cleanup: {
        summary: "Delete what a run left behind and record it in the ledger",
        load: async () => (await import("./cli/cleanup.ts")).externalCleanup,
      },
      retire: {
        summary: "Retire a target: hidden from listings, refused for new runs",
        load: async () => (await targets()).externalRetire,
      },
      regressions: {
        summary: "List saved regressions with status and last result",
        load: async () => (await regressions()).externalRegressions,
      },
      gate: {
        summary:
          "Exit 0 only when every enforced regression's latest replay passed",
        load: async () => (await regressions()).externalGate,
      },
    },
  },
  reference: {
    summary: "Run and rank the reference systems with known deletion behaviour",
    about:
      "In-process memory pipelines with known deletion behaviour, run through the same engine as external runs. Reference history is kept apart from external history.",
    commands: {
      list: {
        summary: "The systems, what each does and its expected outcome",
        load: () => reference("list"),
      },
      plan: {
        summary: "What a run of each system would do (no run)",
        load: () => reference("plan"),
      },
      run: {
        summary: "Run every system (or the named ones) and print the matrix",
        load: () => reference("run"),
      },
      show: {
        summary: "One stored reference run, with expected vs observed",
        load: () => reference("show"),
      },
      dashboard: {
        summary: "Matrix of the latest run of each system",
        load: () => reference("dashboard"),
      },
      ranking: {
        summary: "Systems ordered by the strength of their deletion guarantee",
        load: () => reference("ranking"),
      },
    },
  },
  events: {
    summary: "Ingest, query, summarize and export observability events",
    commands: {
      ingest: {
        summary: "Ingest NDJSON events (all or nothing per batch)",
        load: async () => (await events()).eventsIngest,
      },
      query: {
        summary: "One page of events, newest first",
        load: async () => (await events()).eventsQuery,
      },
      export: {
        summary: "Metadata-only NDJSON of every selected event",
        load: async () => (await events()).eventsExport,
      },
      summary: {
        summary: "Aggregate counts of the selected events",
        load: async () => (await events()).eventsSummary,
      },
    },
  },
  obs: {
    summary:
      "Index maintenance: init, backfill, parity, retention, expiry, erasure",
    commands: {
      init: {
        summary: "Provision the observability tables (reads never do)",
        load: async () => (await obs()).obsInit,
      },
      backfill: {
        summary: "Rebuild index rows from source envelopes (dry run first)",
        load: async () => (await obs()).obsBackfill,
      },
      parity: {
        summary: "Compare envelopes and index rows",
        load: async () => (await obs()).obsParity,
      },
      retention: {
        summary: "Expire previews, metadata and outcomes (dry run first)",
        load: async () => (await obs()).obsRetention,
      },
      "expiry-plan": {
        summary: "List source envelopes to expire, sealed for review",
        load: async () => (await obs()).obsExpiryPlan,
      },
      "expiry-apply": {
        summary: "Archive and delete the envelopes of a reviewed plan",
        load: async () => (await obs()).obsExpiryApply,
      },
      health: {
        summary: "Versions, counts, links, latency, readiness and alerts",
        load: async () => (await obs()).obsHealthCommand,
      },
      erase: {
        summary:
          "Forget a user, thread, memory or events (dry run first; receipts)",
        load: async () => (await obs()).obsErase,
      },
      propagation: {
        summary: "Show or set which applications propagate memory deletions",
        load: async () => (await obs()).obsPropagation,
      },
    },
  },
  audit: {
    summary: "The audit trail of privileged operator actions",
    about:
      "Reveals, account resolutions, artifact lookups, replay plans and drafts, and refused attempts, as hash-chained entries in the data directory's database. Entries hold no content, tokens or emails. audit list --json prints NDJSON: one entry per line, nothing when none match.",
    commands: {
      list: {
        summary:
          "Newest entries first (operator, action, outcome, targets, reason)",
        load: async () => (await audit()).auditList,
      },
      verify: {
        summary:
          "Recompute every entry's digest and the chain (--expect-head HEAD)",
        load: async () => (await audit()).auditVerify,
      },
      head: {
        summary: "Print the verified head, to keep outside the database",
        load: async () => (await audit()).auditHeadCommand,
      },
    },
  },
  ledger: {
    summary: "The ledger's integrity, its head and its backup",
    commands: {
      verify: {
        summary: "Recompute every digest and the chain (--expect-head HEAD)",
        load: async () => (await ledger()).ledgerVerify,
      },
      head: {
        summary: "Print the verified head, to keep outside the database",
        load: async () => (await ledger()).ledgerHeadCommand,
      },
      backup: {
        summary: "Write a consistent single-file copy of the database",
        load: async () => (await ledger()).ledgerBackup,
      },
    },
  },
};

function isGroup(entry: Entry): entry is Group {
  return "commands" in entry;
}

function table(entries: [string, { summary: string }][]): string[] {
  return tableLines(entries.map(([name, entry]) => [name, entry.summary]), {
    indent: "  ",
  });
}

/** Wraps a paragraph at 78 columns. */
function wrap(text: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > 78) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join("\n");
}

function globalUsage(): string {
  const lines: [string, { summary: string }][] = [];
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (!isGroup(entry)) lines.push([name, entry]);
    else {
      for (const [sub, leaf] of Object.entries(entry.commands)) {
        lines.push([`${name} ${sub}`, leaf]);
      }
    }
  }
  return [
    "trace: prove that an AI-memory or RAG application really forgets",
    "",
    "Usage: trace <command> [options]",
    "       trace help <command>        (or trace <command> --help)",
    "       trace --version",
    "",
    "Commands:",
    ...table(lines),
    "",
    "external-<command> is the same as external <command> (external-run, external-show, …).",
    "Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a usage/config error,",
    "130 when a second Ctrl-C (or SIGTERM) ends a run at once.",
    "With --json every command prints one JSON value on stdout, an error",
    "included ({error: {code, message}}) and help ({usage}): an object, except",
    "that reference list and reference plan print an array and events export",
    "prints NDJSON (one object a line).",
    "--application-id is accepted as another name of --application.",
    "",
  ].join("\n");
}

function groupUsage(name: string, group: Group): string {
  return [
    `trace ${name}: ${group.summary}`,
    "",
    `Usage: trace ${name} <command> [options]   (trace ${name} <command> --help for details)`,
    "",
    ...(group.about ? [wrap(group.about), ""] : []),
    "Commands:",
    ...table(Object.entries(group.commands)),
    "",
  ].join("\n");
}

/**
 * Maps a thrown error to its exit code (the one place that does). Every
 * error is 2, a broken ledger too: a reader refuses it rather than present
 * or act on it, and a gate must never pass on it.
 */
export function exitCodeFor(_error: unknown): number {
  return EXIT.usage;
}

/** A command resolved from the arguments, or the usage answer to give instead. */
type Resolution =
  | { kind: "run"; path: string; leaf: Leaf; args: string[] }
  | { kind: "usage"; text: string; toStdout: boolean; code: number }
  | { kind: "unknown"; message: string };

const HELP_FLAGS = new Set(["--help", "-h", "help"]);

function unknown(word: string, known: string[], where: string): Resolution {
  const guess = closestName(word, known);
  return {
    kind: "unknown",
    message: `trace${where}: unknown command ${quoteValue(word)}; ${
      guess
        ? `did you mean "${guess}"? (trace${where} --help lists them all)`
        : `run trace${where} --help for the list`
    }`,
  };
}

function resolveInGroup(
  name: string,
  group: Group,
  args: string[],
): Resolution {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    return {
      kind: "usage",
      text: groupUsage(name, group),
      toStdout: false,
      code: EXIT.usage,
    };
  }
  if (HELP_FLAGS.has(sub)) {
    return {
      kind: "usage",
      text: groupUsage(name, group),
      toStdout: true,
      code: 0,
    };
  }
  const leaf = group.commands[sub];
  if (!leaf && sub.startsWith("-")) {
    return {
      kind: "unknown",
      message:
        `trace ${name}: a command must come before ${sub}; run trace ${name} --help for the list`,
    };
  }
  if (!leaf) return unknown(sub, Object.keys(group.commands), ` ${name}`);
  return { kind: "run", path: `${name} ${sub}`, leaf, args: rest };
}

/** Splits `external-run` into `external` + `run` when that names a command. */
function splitHyphenated(word: string): [string, string] | null {
  const at = word.indexOf("-");
  if (at <= 0) return null;
  const group = COMMANDS[word.slice(0, at)];
  const sub = word.slice(at + 1);
  if (!group || !isGroup(group) || !group.commands[sub]) return null;
  return [word.slice(0, at), sub];
}

function resolve(args: string[]): Resolution {
  const [first, ...rest] = args;
  if (first === undefined) {
    return {
      kind: "usage",
      text: globalUsage(),
      toStdout: false,
      code: EXIT.usage,
    };
  }
  if (first === "--help" || first === "-h") {
    return { kind: "usage", text: globalUsage(), toStdout: true, code: 0 };
  }
  if (first.startsWith("-")) {
    // Options belong to a command; a leading --json is moved where it belongs.
    if (first === "--json" && rest.length > 0) return resolve([...rest, first]);
    return {
      kind: "unknown",
      message: `trace: ${
        quoteValue(first)
      } is an option, and options go after the command (e.g. trace external-runs ${
        clipValue(first)
      } …); run trace --help for the commands`,
    };
  }
  if (first === "help") {
    // `trace help external run` answers what `trace external run --help` does.
    return rest.length === 0
      ? { kind: "usage", text: globalUsage(), toStdout: true, code: 0 }
      : resolve([...rest, "--help"]);
  }
  const split = splitHyphenated(first);
  if (split) {
    const resolved = resolve([...split, ...rest]);
    // Messages name the command the way it was typed.
    return resolved.kind === "run" ? { ...resolved, path: first } : resolved;
  }
  const entry = COMMANDS[first];
  if (!entry) {
    const known = Object.keys(COMMANDS).concat(
      Object.entries(COMMANDS).flatMap(([name, e]) =>
        isGroup(e) ? Object.keys(e.commands).map((s) => `${name}-${s}`) : []
      ),
    );
    return unknown(first, known, "");
  }
  if (isGroup(entry)) return resolveInGroup(first, entry, rest);
  return { kind: "run", path: first, leaf: entry, args: rest };
}

/**
 * The command `args` name, loaded, with the arguments left for it. Tests call
 * commands through this to see their errors as thrown; `main` prints them.
 */
export async function loadCommand(
  args: string[],
): Promise<{ path: string; command: Command; args: string[] }> {
  const resolution = resolve(args);
  if (resolution.kind !== "run") {
    throw new UsageError(
      resolution.kind === "unknown"
        ? resolution.message
        : `No command named in "trace ${args.join(" ")}"`,
    );
  }
  return {
    path: resolution.path,
    command: await resolution.leaf.load(),
    args: resolution.args,
  };
}

/**
 * Runs the CLI with `args`; returns the exit code instead of exiting.
 *
 * With `--json`, stdout always gets exactly one JSON object: a command that
 * fails before it wrote anything there gets `{"error":{"code","message"}}`
 * printed for it, here and nowhere else (the message also goes to stderr).
 */
export async function main(
  args: string[],
  io: CliIo = processIo(),
): Promise<number> {
  const json = args.includes("--json");
  if (args[0] === "--version" || args[0] === "version") {
    if (json) printJson(io, { version: VERSION });
    else io.out(`trace ${VERSION}\n`);
    return 0;
  }
  const resolution = resolve(args);
  if (resolution.kind === "usage") {
    if (resolution.toStdout && json) printJson(io, { usage: resolution.text });
    else if (resolution.toStdout) io.out(resolution.text);
    else io.err(resolution.text);
    return resolution.code;
  }
  if (resolution.kind === "unknown") {
    io.err(terminalSafe(resolution.message) + "\n");
    if (json) {
      printJson(io, { error: jsonError(new UsageError(resolution.message)) });
    }
    return EXIT.usage;
  }
  const stdout = trackStdout(io);
  if (json) {
    io.onExitAtOnce?.((note) => {
      if (stdout.wrote()) return;
      const answer = stdout.exitAnswer();
      printJson(
        io,
        answer ? answer(note) : {
          error: {
            code: "interrupted",
            message: note ?? "interrupted again: exited at once",
          },
        },
      );
    });
  }
  try {
    const command = await resolution.leaf.load();
    if (!json || !asksForHelp(resolution.args)) {
      return await command(resolution.args, stdout.io);
    }
    // Help asked for with --json is one JSON value too: its text as `usage`.
    let usage = "";
    const code = await command(
      resolution.args,
      withOut(stdout.io, (text) => {
        usage += text;
      }),
    );
    if (usage !== "") printJson(stdout.io, { usage });
    return code;
  } catch (thrown) {
    // Output piped into a reader that stopped early (`| head`) is a normal end.
    if (thrown instanceof Deno.errors.BrokenPipe) return 0;
    const error = explainSqlite(thrown);
    // Messages may quote what was typed (a flag, a path): no control character reaches the terminal.
    io.err(`trace ${resolution.path}: ${terminalSafe(errorMessage(error))}\n`);
    if (json && !stdout.wrote()) printJson(io, { error: jsonError(error) });
    return exitCodeFor(error);
  }
}

/** Whether `args` hold a help flag among the options (not as an operand after `--`). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((arg) =>
    arg === "--help" || arg === "-h"
  );
}

/** `io` writing its stdout to `out` instead; the rest is `io`'s own. */
function withOut(io: CliIo, out: (text: string) => void): CliIo {
  return {
    out,
    err: (text) => io.err(text),
    readStdin: (limit) => io.readStdin(limit),
    stderrIsTerminal: io.stderrIsTerminal,
    env: (name) => io.env(name),
    // A getter: reading `interrupted` installs the signal handlers, which only
    // commands that promise to stop cleanly may do.
    get interrupted() {
      return io.interrupted;
    },
    setExitNote: (note) => io.setExitNote?.(note),
    onExitAtOnce: (hook) => io.onExitAtOnce?.(hook),
    setExitAnswer: (answer) => io.setExitAnswer?.(answer),
  };
}

/** `io` with a note of whether anything reached stdout, and the command's answer to a second Ctrl-C. */
function trackStdout(io: CliIo): {
  io: CliIo;
  wrote: () => boolean;
  exitAnswer: () => ((note: string | null) => unknown) | null;
} {
  let wrote = false;
  let exitAnswer: ((note: string | null) => unknown) | null = null;
  const tracked = withOut(io, (text) => {
    if (text.length > 0) wrote = true;
    io.out(text);
  });
  tracked.setExitAnswer = (answer) => void (exitAnswer = answer);
  return { io: tracked, wrote: () => wrote, exitAnswer: () => exitAnswer };
}

if (import.meta.main) Deno.exit(await main(Deno.args));

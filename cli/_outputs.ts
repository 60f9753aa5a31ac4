/**
 * The result files of a run (`--output`, `--junit`, `--summary-md`):
 * reserved before the run, written whole when it ends, and never left empty
 * behind.
 *
 * A reservation is a small placeholder created exclusively at the path,
 * naming the process and a random token, so a clash is refused before the
 * run and a path another live run reserved is refused even with `--force`.
 * `-` names stdout instead of a file. Results are written through a
 * temporary file and a rename, so a full disk leaves no partial file.
 * Placeholders not yet written are removed when the run fails early, and
 * also when the process exits at once on a second Ctrl-C (the runtime's
 * `unload` event).
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { UsageError } from "../lib/errors.ts";
import { fileProblem } from "../lib/file_errors.ts";
import { stateFileKind } from "../lib/state_files.ts";
import { processIdentity } from "../lib/runner/process_identity.ts";
import {
  isProcessAlive,
  refuseStateDestination,
  writeFileWhole,
} from "../lib/runs/mod.ts";

/** The output flags of commands that run the contract. */
export const OUTPUT_FLAGS = {
  output: { type: "string" },
  junit: { type: "string" },
  "summary-md": { type: "string" },
  html: { type: "string" },
  force: { type: "boolean", default: false },
} as const;

/** The help paragraph of the output flags. */
export const OUTPUTS_HELP =
  `Outputs (reserved before the run; directories are created; - is stdout):
  --output FILE      the report as JSON
  --junit FILE       JUnit XML, one test case per assertion family, with the
                     ledger head after the run as a property
  --summary-md FILE  a short Markdown summary: findings, cleanup, the commands
                     that save and then replay the failure, the ledger head
  --html FILE        the run's page as one self-contained HTML file (inline
                     CSS and SVG, no script, nothing fetched)
  --force            replace existing files; a path another live run reserved,
                     a SQLite database or its sidecar files, and a run's
                     checkpoint are still refused
An existing file is refused without --force. A result that cannot be written
(a full disk) leaves no partial file; files not written when the run stops
early (also on a second Ctrl-C) are removed. A run that cannot start once the
command line is read (config or target refused, token_env unset, adapter
unreachable) still writes --junit (one test case in error) and --summary-md
with the reason; --output and --html are not written, as there is no report.
So does a run that stops on an error after it started, naming its checkpoint
and the trace external-cleanup command for what it may have left.
`;

/** Which result an output holds. */
export type OutputKind = "output" | "junit" | "summaryMd" | "html";

/** Flag values naming outputs. */
export type OutputValues = {
  output?: string | undefined;
  junit?: string | undefined;
  "summary-md"?: string | undefined;
  html?: string | undefined;
  force?: boolean | undefined;
  json?: boolean | undefined;
};

/** One requested output: a reserved file, or stdout for `-`. */
export interface Output {
  kind: OutputKind;
  flag: string;
  /** The path as given; `-` for stdout. */
  path: string;
}

/** The outputs of one run, reserved. */
export interface ReservedOutputs {
  /** Every requested output, in flag order. */
  outputs: Output[];
  /** The output that goes to stdout (`-`), if any. */
  stdout: Output | null;
  /** Writes one result file whole over its placeholder; throws the file system's error. */
  write(output: Output, text: string): Promise<void>;
  /** Removes placeholders that were never written (the run failed, or a write did). */
  release(): Promise<void>;
}

const FLAGS: [OutputKind, keyof OutputValues, string][] = [
  ["output", "output", "--output"],
  ["junit", "junit", "--junit"],
  ["summaryMd", "summary-md", "--summary-md"],
  ["html", "html", "--html"],
];

/** What an output may never be: the command's database files and its data directory's own state. */
export interface OwnState {
  /** The database's files, even before they exist. */
  databaseFiles: readonly string[];
  /** The data directory, whose checkpoints and erasure key no output may take; `null`: none to protect. */
  dataDir: string | null;
}

/**
 * Reserves every requested output before the run: refuses an existing file
 * (unless `--force`), a path another live run reserved, the same path twice,
 * more than one claim on stdout (`-` or `--json`), the command's own
 * database files, even before they exist, and its data directory's
 * checkpoints and erasure key.
 */
export async function reserveOutputs(
  values: OutputValues,
  ownState: OwnState = { databaseFiles: [], dataDir: null },
): Promise<ReservedOutputs> {
  const outputs = requestedOutputs(values);
  const placeholders = new Map<string, string>();
  // Runs on the way out of a second Ctrl-C: synchronous, and only files
  // that still hold this run's placeholder (a result written at that very
  // moment stays).
  const cleanUp = () => {
    for (const [path, text] of placeholders) {
      try {
        if (readSmallSync(path) === text) Deno.removeSync(path);
      } catch {
        // Already gone.
      }
    }
  };
  const reserved: ReservedOutputs = {
    outputs,
    stdout: outputs.find((o) => o.path === "-") ?? null,
    write: async (output, text) => {
      await writeFileWhole(output.path, text, { replace: true });
      placeholders.delete(output.path);
    },
    release: async () => {
      for (const path of placeholders.keys()) {
        await removeOwnPlaceholder(path, placeholders.get(path)!);
      }
      placeholders.clear();
      globalThis.removeEventListener("unload", cleanUp);
    },
  };
  globalThis.addEventListener("unload", cleanUp);
  try {
    for (const output of outputs) {
      if (output.path === "-") continue;
      placeholders.set(
        output.path,
        await reserve(output, values.force === true, ownState),
      );
    }
  } catch (error) {
    await reserved.release();
    throw error;
  }
  return reserved;
}

function requestedOutputs(values: OutputValues): Output[] {
  const outputs: Output[] = [];
  for (const [kind, key, flag] of FLAGS) {
    const path = values[key];
    if (typeof path === "string") outputs.push({ kind, flag, path });
  }
  const seen = new Map<string, string>();
  for (const { flag, path } of outputs) {
    const key = path === "-" ? "-" : resolve(path);
    const other = seen.get(key) ??
      (key === "-" && values.json ? "--json" : null);
    if (other) {
      throw new UsageError(
        path === "-"
          ? `Cannot write ${flag} to stdout: ${other} writes there too; give one of them a file`
          : `Cannot write ${flag} ${path}: ${other} names the same file; choose distinct paths`,
      );
    }
    seen.set(key, flag);
  }
  return outputs;
}

/** A placeholder's text: who reserved it, and a token only this reservation knows. */
function placeholderText(): string {
  const identity = processIdentity(Deno.pid) ?? "unknown";
  return `trace: reserved for the result of a run in process ${Deno.pid} (${identity}) token ${crypto.randomUUID()}; replaced when it finishes\n`;
}

const PLACEHOLDER =
  /^trace: reserved for the result of a run in process (\d+) \(([^)]*)\) token /;

/** Reserves `output.path`; returns the placeholder text written there. */
async function reserve(
  output: Output,
  force: boolean,
  { databaseFiles, dataDir }: OwnState,
): Promise<string> {
  const refuse = (why: string) =>
    new UsageError(`Cannot write ${output.flag} ${output.path}: ${why}`);
  const state = await stateFileKind(output.path);
  if (state) {
    throw refuse(
      `it is ${state}, which an output never replaces (not even with --force); choose another path`,
    );
  }
  // A file not written yet in the checkpoints' folder would be read as one.
  if (dataDir !== null) {
    await refuseStateDestination(output.path, dataDir, output.flag);
  }
  // A database not created yet has no content to tell it by.
  if (databaseFiles.includes(resolve(output.path))) {
    throw refuse(
      "it is the database this command uses (or one of its files); choose another path",
    );
  }
  const text = placeholderText();
  try {
    await Deno.mkdir(dirname(output.path), { recursive: true });
  } catch (error) {
    // A file where a directory of the path should be.
    throw refuse(
      error instanceof Deno.errors.AlreadyExists
        ? "a part of the path is not a directory; check the path"
        : fileProblem(error, "write"),
    );
  }
  try {
    await Deno.writeTextFile(output.path, text, {
      createNew: true,
      mode: 0o600,
    });
    return text;
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) {
      throw refuse(fileProblem(error, "write"));
    }
  }
  const info = await Deno.lstat(output.path);
  if (info.isDirectory) throw refuse("it is a directory; name a file");
  if (!info.isFile) throw refuse("it is not a regular file; name a file");
  const holder = await placeholderHolder(output.path);
  if (holder?.alive) {
    throw refuse(
      `another run reserved it (process ${holder.pid}, still running); wait for it or choose another path`,
    );
  }
  if (!force) {
    throw refuse(
      holder
        ? "a run that ended without writing it reserved it; choose a new path or pass --force to replace it"
        : "the file already exists; choose a new path or pass --force to replace it",
    );
  }
  try {
    await writeFileWhole(output.path, text, { replace: true });
  } catch (error) {
    throw refuse(fileProblem(error, "write"));
  }
  if (await readSmall(output.path) !== text) {
    throw refuse(
      "another run reserved it at the same moment; choose another path",
    );
  }
  return text;
}

async function placeholderHolder(
  path: string,
): Promise<{ pid: number; alive: boolean } | null> {
  const match = PLACEHOLDER.exec(await readSmall(path));
  if (!match) return null;
  const pid = Number(match[1]);
  const identity = match[2] === "unknown" ? null : match[2]!;
  const alive = isProcessAlive(pid) &&
    (identity === null || processIdentity(pid) === identity);
  return { pid, alive };
}

/** The first few hundred bytes of a file, as text ("" when unreadable). */
async function readSmall(path: string): Promise<string> {
  try {
    const file = await Deno.open(path, { read: true });
    try {
      const buffer = new Uint8Array(512);
      const n = await file.read(buffer);
      return new TextDecoder().decode(buffer.subarray(0, n ?? 0));
    } finally {
      file.close();
    }
  } catch {
    return "";
  }
}

function readSmallSync(path: string): string {
  const file = Deno.openSync(path, { read: true });
  try {
    const buffer = new Uint8Array(512);
    const n = file.readSync(buffer);
    return new TextDecoder().decode(buffer.subarray(0, n ?? 0));
  } finally {
    file.close();
  }
}

/** Removes a placeholder only while it still holds this reservation's text. */
async function removeOwnPlaceholder(path: string, text: string): Promise<void> {
  if (await readSmall(path) === text) await Deno.remove(path).catch(() => {});
}

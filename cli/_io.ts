/** Where commands write and read: real stdio in the binary, buffers in tests. */

import { readBounded } from "../lib/bytes.ts";
import { nonEmptyEnv } from "../lib/env_switch.ts";

/** The streams a command uses. */
export interface CliIo {
  /** Result output (JSON with `--json`, human text otherwise). */
  out(text: string): void;
  /** Progress and diagnostics. */
  err(text: string): void;
  /** Whole standard input, for `-` arguments; `null` past `limit` bytes (read no further). */
  readStdin(limit: number): Promise<Uint8Array | null>;
  /** Whether stderr is a terminal (a live progress line only then). */
  stderrIsTerminal: boolean;
  /** Environment lookup. */
  env(name: string): string | undefined;
  /**
   * Aborts on the first Ctrl-C / SIGTERM. Reading it installs the handlers:
   * a command that reads it promises to stop cleanly (a second signal still
   * exits at once); commands that never read it are killed as usual.
   */
  readonly interrupted?: AbortSignal | undefined;
  /**
   * What to print when a second Ctrl-C or SIGTERM ends the process at once
   * (what was left unfinished and the command that finishes it); `null`
   * clears it. Streams without signal handling ignore it.
   */
  setExitNote?(note: string | null): void;
  /**
   * Runs `hook` with the exit note just before a second Ctrl-C or SIGTERM
   * ends the process at once (`--json` prints its one object there).
   */
  onExitAtOnce?(hook: (note: string | null) => void): void;
  /**
   * The one object `--json` prints when a second Ctrl-C or SIGTERM ends the
   * process at once, built from the exit note, for a command whose
   * interrupted answer has a shape of its own (else `main()` prints
   * `{error: {code: "interrupted", message}}`); `null` clears it.
   */
  setExitAnswer?(answer: ((note: string | null) => unknown) | null): void;
}

/** A command implementation: parses its own flags, returns an exit code. */
export type Command = (args: string[], io: CliIo) => Promise<number>;

const encoder = new TextEncoder();

/** The process's real standard streams. */
export function processIo(): CliIo {
  let signal: AbortSignal | undefined;
  let exitNote: string | null = null;
  const hooks: ((note: string | null) => void)[] = [];
  const err = (text: string) => writeAll(Deno.stderr, text);
  return {
    out: (text) => writeAll(Deno.stdout, text),
    err,
    readStdin: (limit) => readBounded(Deno.stdin.readable, limit),
    stderrIsTerminal: Deno.stderr.isTerminal(),
    env: (name) => Deno.env.get(name),
    get interrupted() {
      return signal ??= interruptSignal(err, () => exitNote, hooks);
    },
    setExitNote: (note) => void (exitNote = note),
    onExitAtOnce: (hook) => void hooks.push(hook),
  };
}

/** The exit code of a process a second Ctrl-C or SIGTERM ended at once (128 + SIGINT). */
export const EXIT_AT_ONCE = 130;

/**
 * How long after the first signal another one is the same Ctrl-C delivered
 * twice: a terminal signals every process of its foreground group, and a
 * parent such as `deno task` (which runs `task start`) or `npm run` passes
 * the signal on to its child once more, well under a millisecond later. A
 * person pressing Ctrl-C again takes longer than this.
 */
export const SAME_SIGNAL_MS = 100;

/**
 * First SIGINT/SIGTERM aborts the returned signal; a second prints the exit
 * note (what stays unfinished) and exits with {@link EXIT_AT_ONCE}. One
 * arriving within {@link SAME_SIGNAL_MS} of the first is that first one again.
 */
function interruptSignal(
  err: (text: string) => void,
  exitNote: () => string | null,
  hooks: readonly ((note: string | null) => void)[],
): AbortSignal {
  const controller = new AbortController();
  let firstAt = 0;
  const onSignal = (name: "SIGINT" | "SIGTERM") => {
    // SIGTERM comes from service managers and CI, Ctrl-C from a person.
    const term = name === "SIGTERM";
    if (
      controller.signal.aborted &&
      performance.now() - firstAt < SAME_SIGNAL_MS
    ) {
      return;
    }
    if (controller.signal.aborted) {
      const note = exitNote();
      err(
        (term
          ? "received SIGTERM again, exiting now\n"
          : "\ninterrupted again: exiting now\n") +
          (note ? `${note}\n` : ""),
      );
      for (const hook of hooks) hook(note);
      Deno.exit(EXIT_AT_ONCE);
    }
    firstAt = performance.now();
    err(
      term
        ? "received SIGTERM, shutting down\n"
        : "\ninterrupted: finishing up; press Ctrl-C again to exit at once\n",
    );
    controller.abort();
  };
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(name, () => onSignal(name));
    } catch {
      // SIGTERM listeners are not supported on Windows; Ctrl-C still is.
    }
  }
  return controller.signal;
}

function writeAll(
  stream: { writeSync(p: Uint8Array): number },
  text: string,
): void {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
}

/** A file argument, or stdin for `-`, as bytes; `null` once past `limit` bytes (read no further). */
export async function readInputBytes(
  path: string,
  io: CliIo,
  limit: number,
): Promise<Uint8Array | null> {
  if (path === "-") return await io.readStdin(limit);
  return await readBounded((await Deno.open(path)).readable, limit);
}

/** A file argument, or stdin for `-`, as UTF-8 text; `null` once past `limit` bytes. */
export async function readInput(
  path: string,
  io: CliIo,
  limit: number,
): Promise<string | null> {
  const bytes = await readInputBytes(path, io, limit);
  if (bytes === null) return null;
  try {
    // The byte-order mark stays, as a text file read holds it: configs name it.
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
      .decode(bytes);
  } catch (error) {
    throw new Deno.errors.InvalidData("not UTF-8", { cause: error });
  }
}

/** `MiB` of a byte count, for messages. */
export function mebibytes(bytes: number): string {
  return `${bytes / 1024 / 1024} MiB`;
}

/** Resolves once `io.interrupted` aborts (the first Ctrl-C or SIGTERM). */
export function untilInterrupted(io: CliIo): Promise<void> {
  const signal = io.interrupted;
  if (!signal) return new Promise(() => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
}

/**
 * A credential variable: unset is `undefined`, set but empty is refused. An
 * empty value is almost always a CI variable that did not expand, and taking
 * it as unset would quietly open what the variable was meant to protect.
 */
export function credentialFromEnv(
  io: Pick<CliIo, "env">,
  name: string,
  unsetMeans: string,
): string | undefined {
  return nonEmptyEnv(
    name,
    io.env(name),
    `unset it ${unsetMeans}, or give it a value`,
  );
}

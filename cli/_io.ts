/** Where commands write and read: real stdio in the binary, buffers in tests. */

/** The streams a command uses. */
export interface CliIo {
  /** Result output (JSON with `--json`, human text otherwise). */
  out(text: string): void;
  /** Progress and diagnostics. */
  err(text: string): void;
  /** Whole standard input, for `-` arguments. */
  readStdin(): Promise<string>;
  /** Whether stderr is a terminal (a live progress line only then). */
  stderrIsTerminal: boolean;
  /** Environment lookup. */
  env(name: string): string | undefined;
  /** Resolves when the user interrupts (Ctrl-C); commands may ignore it. */
  interrupted?: AbortSignal;
}

/** A command implementation: parses its own flags, returns an exit code. */
export type Command = (args: string[], io: CliIo) => Promise<number>;

const encoder = new TextEncoder();

/** The process's real standard streams. */
export function processIo(): CliIo {
  return {
    out: (text) => writeAll(Deno.stdout, text),
    err: (text) => writeAll(Deno.stderr, text),
    readStdin: () => new Response(Deno.stdin.readable).text(),
    stderrIsTerminal: Deno.stderr.isTerminal(),
    env: (name) => Deno.env.get(name),
  };
}

function writeAll(
  stream: { writeSync(p: Uint8Array): number },
  text: string,
): void {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
}

/** Reads a file argument, or stdin for `-`. */
export async function readInput(path: string, io: CliIo): Promise<string> {
  if (path === "-") return await io.readStdin();
  return await Deno.readTextFile(path);
}

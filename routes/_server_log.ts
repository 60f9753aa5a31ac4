/**
 * Where the server writes what it never sends to clients: a line sink the
 * error mapping and the request log share.
 *
 * @module
 */

/** Where the server writes details it never sends to clients. */
export type ServerLog = (line: string) => void;

const encoder = new TextEncoder();

/** The default {@link ServerLog}: one line on the server's stderr. */
export function stderrLog(line: string): void {
  Deno.stderr.writeSync(encoder.encode(line + "\n"));
}

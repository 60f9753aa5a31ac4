/**
 * One HTTP/1.1 POST over one fresh connection, written by hand on
 * `Deno.connect` / `Deno.startTls` instead of `fetch`, because Trace must:
 *
 * - bound the whole request (connect, TLS handshake, write, headers, body) by
 *   one monotonic deadline, with every read racing what is left of it;
 * - check framing byte for byte (Content-Length against the bytes received,
 *   complete chunked coding, nothing after the end), which `fetch` hides;
 * - never follow redirects, never use `HTTP(S)_PROXY` or other environment
 *   proxies (we connect directly to the configured host), never retry, and
 *   never reuse a pooled connection: each request opens, sends
 *   `Connection: close`, and closes its own socket in every outcome.
 *
 * Bodies of non-200 answers are never read: nothing uses them and they may
 * hold data that must not reach a report.
 *
 * @module
 */

import { errorMessage } from "../errors.ts";
import { ProtocolError } from "../contract/protocol.ts";
import { closeQuietly, openConnection } from "./_connect.ts";
import { Deadline } from "./_deadline.ts";
import { ByteReader } from "./_reader.ts";
import { readBody, readHead } from "./_response.ts";

/** Largest accepted response body: 1 MiB. */
export const MAX_RESPONSE_BYTES = 1_048_576;

/** One request to send. */
export interface Http1PostOptions {
  /** Absolute target URL (path is sent as is, with no query). */
  url: URL;
  /** Extra header fields, after Host; names and values must be valid field text. */
  headers: Array<[string, string]>;
  /** Request body bytes. */
  body: Uint8Array;
  /** Budget for the whole exchange, in milliseconds. */
  timeoutMs: number;
  /** Extra trusted roots in PEM, for tests against a self-signed server. */
  caCerts?: string[] | undefined;
  /** Refuse unless the peer address is loopback (plain HTTP). */
  requireLoopbackPeer?: boolean;
  /** Body cap; defaults to {@link MAX_RESPONSE_BYTES}. */
  maxBodyBytes?: number;
  /** Calls the request off: the connection closes and a `timeout` is thrown. */
  signal?: AbortSignal | undefined;
}

/** What came back: the body only for status 200. */
export interface Http1Response {
  status: number;
  headers: Map<string, string[]>;
  body: Uint8Array | null;
}

const encoder = new TextEncoder();

/** Sends one POST and reads its answer; throws {@link ProtocolError} on any failure. */
export async function http1Post(
  options: Http1PostOptions,
): Promise<Http1Response> {
  const deadline = new Deadline(options.timeoutMs, options.signal);
  const conn = await openConnection(options, deadline);
  const close = () => closeQuietly(conn);
  try {
    await writeAll(conn, encodeRequest(options), deadline, close);
    const reader = new ByteReader(conn, deadline, close);
    const head = await readHead(reader);
    if (head.status !== 200) return { ...head, body: null };
    const body = await readBody(
      reader,
      head,
      options.maxBodyBytes ?? MAX_RESPONSE_BYTES,
    );
    await reader.expectEnd();
    return { ...head, body };
  } finally {
    close();
  }
}

function encodeRequest(options: Http1PostOptions): Uint8Array {
  const { url, body } = options;
  const fields: Array<[string, string]> = [
    ["Host", url.host],
    ...options.headers,
    ["Content-Length", String(body.length)],
  ];
  for (const [name, value] of fields) {
    // Printable ASCII only: no header injection, and one byte per character below.
    if (
      !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || !/^[ -~\t]*$/.test(value)
    ) {
      throw new TypeError(
        `Invalid request header field ${JSON.stringify(name)}`,
      );
    }
  }
  const head = `POST ${url.pathname} HTTP/1.1\r\n${
    fields.map(([n, v]) => `${n}: ${v}\r\n`).join("")
  }\r\n`;
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(encoder.encode(head));
  bytes.set(body, head.length);
  return bytes;
}

async function writeAll(
  conn: Deno.Conn,
  bytes: Uint8Array,
  deadline: Deadline,
  close: () => void,
): Promise<void> {
  try {
    for (let sent = 0; sent < bytes.length;) {
      sent += await deadline.race(conn.write(bytes.subarray(sent)), close);
    }
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError(
      "connect",
      `connection lost while sending the request: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  }
}

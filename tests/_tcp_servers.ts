/**
 * Raw TCP (and TLS) servers on 127.0.0.1 that answer with exact bytes, so each
 * test can misbehave in one precise way that a real HTTP server never would.
 */

import assert from "node:assert/strict";
import {
  ProtocolError,
  type RequestFailure,
} from "../lib/contract/protocol.ts";

/** What a test server read from the client before answering. */
export interface ReceivedRequest {
  method: string;
  path: string;
  version: string;
  /** Lower-case names; repeated fields joined with ", ". */
  headers: Map<string, string>;
  body: string;
}

/** What a behaviour can do with one accepted connection. */
export interface ServerContext {
  request: ReceivedRequest;
  /** Writes all of `data`; throws once the client has gone. */
  write(data: string | Uint8Array): Promise<void>;
  /** Resolves when the client closes (or the server shuts down). */
  waitForClose(): Promise<void>;
  /** Sleeps `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
  /** True once the server is shutting down. */
  stopped(): boolean;
}

/** How the server answers each connection; the connection closes after it. */
export type Behaviour = (context: ServerContext) => Promise<void>;

/** A running raw server. */
export interface RawServer {
  url: string;
  port: number;
  /** Connections accepted so far (also those that failed the handshake). */
  connections(): number;
  /** Requests fully read so far. */
  requests: ReceivedRequest[];
}

const TLS_DIR = new URL("../fixtures/tls/", import.meta.url);

/** The test-only self-signed certificate in PEM, for `caCerts`. */
export function testCertificate(): string {
  return Deno.readTextFileSync(new URL("cert.pem", TLS_DIR));
}

/** Runs `fn` against a raw server answering with `behaviour`, then shuts it down. */
export async function withRawServer<T>(
  behaviour: Behaviour,
  fn: (server: RawServer) => Promise<T>,
  options: { tls?: boolean; hostname?: string } = {},
): Promise<T> {
  const hostname = options.hostname ?? "127.0.0.1";
  const listener = options.tls
    ? Deno.listenTls({
      hostname,
      port: 0,
      cert: testCertificate(),
      key: Deno.readTextFileSync(new URL("key.pem", TLS_DIR)),
    })
    : Deno.listen({ hostname, port: 0 });
  const port = listener.addr.port;
  const scheme = options.tls ? "https" : "http";
  const server: RawServer = {
    url: `${scheme}://${hostname}:${port}`,
    port,
    connections: () => accepted,
    requests: [],
  };
  let accepted = 0;
  let stopped = false;
  const open = new Set<Deno.Conn>();
  const handlers: Promise<void>[] = [];
  const acceptLoop = (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        open.add(conn);
        handlers.push(serve(conn, behaviour, server, () => stopped));
      }
    } catch {
      // The listener was closed during shutdown.
    }
  })();
  try {
    return await fn(server);
  } finally {
    stopped = true;
    listener.close();
    await acceptLoop;
    for (const conn of open) closeQuietly(conn);
    await Promise.all(handlers);
  }
}

async function serve(
  conn: Deno.Conn,
  behaviour: Behaviour,
  server: RawServer,
  stopped: () => boolean,
): Promise<void> {
  try {
    const request = await readRequest(conn);
    server.requests.push(request);
    await behaviour({
      request,
      write: (data) => writeAll(conn, data),
      waitForClose: () => drain(conn),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      stopped,
    });
  } catch {
    // The client went away (timeout, refused handshake, early close): expected here.
  } finally {
    closeQuietly(conn);
  }
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

async function readRequest(conn: Deno.Conn): Promise<ReceivedRequest> {
  let bytes: Uint8Array = new Uint8Array(0);
  let headEnd = -1;
  while (headEnd < 0) {
    bytes = concat(bytes, await readSome(conn));
    headEnd = decoder.decode(bytes).indexOf("\r\n\r\n");
  }
  const [requestLine = "", ...lines] = decoder.decode(
    bytes.subarray(0, headEnd),
  )
    .split("\r\n");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.set(
      name,
      headers.has(name) ? `${headers.get(name)}, ${value}` : value,
    );
  }
  const length = Number(headers.get("content-length") ?? 0);
  let body: Uint8Array = bytes.subarray(headEnd + 4);
  while (body.length < length) body = concat(body, await readSome(conn));
  const [method = "", path = "", version = ""] = requestLine.split(" ");
  return { method, path, version, headers, body: decoder.decode(body) };
}

async function readSome(conn: Deno.Conn): Promise<Uint8Array> {
  const buffer = new Uint8Array(16 * 1024);
  const count = await conn.read(buffer);
  if (count === null) throw new Error("client closed before sending a request");
  return buffer.subarray(0, count);
}

async function writeAll(
  conn: Deno.Conn,
  data: string | Uint8Array,
): Promise<void> {
  let bytes = typeof data === "string" ? encoder.encode(data) : data;
  while (bytes.length > 0) bytes = bytes.subarray(await conn.write(bytes));
}

async function drain(conn: Deno.Conn): Promise<void> {
  try {
    while (await conn.read(new Uint8Array(1024)) !== null) {
      // Discard: the behaviour only waits for the client to leave.
    }
  } catch {
    // Closed by the server's shutdown or reset by the client.
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** A complete response with the given status line tail, fields and body. */
export function rawResponse(
  status: string,
  fields: string[],
  body = "",
): string {
  const head = [`HTTP/1.1 ${status}`, ...fields].join("\r\n");
  return `${head}\r\n\r\n${body}`;
}

/** A 200 JSON response framed by a correct Content-Length. */
export function jsonResponse(body: string): string {
  return rawResponse("200 OK", [
    "Content-Type: application/json",
    `Content-Length: ${encoder.encode(body).length}`,
  ], body);
}

/** A behaviour that writes `data`, then closes. */
export function answer(data: string | Uint8Array): Behaviour {
  return async ({ write }) => await write(data);
}

/** Awaits a rejection with `failure` and returns the error for more checks. */
export async function expectFailure(
  promise: Promise<unknown>,
  failure: RequestFailure,
): Promise<ProtocolError> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    assert.equal(error.failure, failure, error.message);
    return error;
  }
  return assert.fail(`expected a "${failure}" failure, got a response`);
}

/** A loopback port nothing listens on (bound once, then released). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

/**
 * Runs `fn` with a loopback listener that counts connection attempts and
 * closes each at once: for checks that nothing was sent (a config error, an
 * ignored proxy).
 */
export async function withCountingListener<T>(
  fn: (url: string, count: () => number) => Promise<T>,
): Promise<T> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      connections++;
      conn.close();
    }
  })();
  try {
    return await fn(
      `http://127.0.0.1:${listener.addr.port}`,
      () => connections,
    );
  } finally {
    listener.close();
    await accepting.catch(() => {});
  }
}

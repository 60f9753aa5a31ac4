/**
 * Puts a server app on the network with the bounds `Deno.serve` lacks: it
 * has no header-read timeout, no body timeout and no cap on connections, so
 * a client that opens connections and trickles bytes holds them forever.
 *
 * Deno offers no hook into its HTTP server's connections (`Deno.serveHttp`,
 * which took a connection, was removed in Deno 2, and `node:http` ignores
 * `headersTimeout`), and writing an HTTP/1.1 server of our own would mean
 * parsing requests ourselves. So a small guard stands in front of
 * `Deno.serve` instead, which still parses every request:
 *
 * - the guard accepts TCP connections itself (`Deno.listen`) and answers
 *   503 past {@link ServeLimits.maxConnections} open ones, and past
 *   {@link ServeLimits.maxConnectionsPerClient} open ones from one client
 *   address (an IPv6 client by its /64), so one remote client cannot hold
 *   every slot. Loopback clients share the total only: every local process
 *   connects from the same address, so a per-address share cannot tell
 *   them apart (the server binds to loopback by default: there, what one
 *   local client can hold is the total);
 * - each connection must deliver a complete request head (at most
 *   {@link ServeLimits.maxHeadBytes}) within
 *   {@link ServeLimits.headerTimeoutMs}, else it is answered 408 (431 when
 *   too long) and closed: as the app's JSON error when the request line
 *   that arrived names the API, `/mcp` or a `.json` twin, else in one line
 *   of text (the HTML error page needs the app);
 * - the head is passed on with `Connection: close` to `Deno.serve`, which
 *   listens on a Unix socket in a private directory (loopback TCP where
 *   there are no Unix sockets), so every request arrives on a connection of
 *   its own and meets the head deadline;
 * - the body is bounded by the app itself (`routes/_body.ts`: 408 when it
 *   does not arrive in time); `Deno.serve` would then keep reading a
 *   trickled body to its end, so the guard counts the bytes of a body with
 *   a `Content-Length` (or follows a chunked body's framing,
 *   `_chunked_end.ts`) and closes the connection once
 *   {@link ServeLimits.bodyTimeoutMs} has passed without all of it;
 * - the whole exchange is bounded by {@link ServeLimits.requestTimeoutMs}.
 *
 * @module
 */

import { ConfigError } from "../lib/errors.ts";
import { clipValue } from "../lib/echo.ts";
import { DEFAULT_BODY_TIMEOUT_MS } from "./_body.ts";
import { settleWithin } from "../lib/settle_within.ts";
import { ChunkedBodyEnd, isChunkedHead } from "./_chunked_end.ts";
import { answersJsonErrors, CODE_BY_STATUS } from "./_error_codes.ts";

/** Bounds the guard applies to every connection. */
export interface ServeLimits {
  /** Most connections open at once; more are answered 503 (default 256). */
  maxConnections: number;
  /** Most connections open at once from one non-loopback client address (an IPv6 /64); more are answered 503 (default 32). */
  maxConnectionsPerClient: number;
  /** Time a connection has to deliver a complete request head (default 10 s). */
  headerTimeoutMs: number;
  /** Longest request head, request line and headers (default 64 KiB). */
  maxHeadBytes: number;
  /**
   * Time a body (with a `Content-Length`, or chunked) has to arrive once its head did
   * (default 60 s, as the app's own body bound); past it, and a moment for
   * the app's 408 to pass, the connection is closed.
   */
  bodyTimeoutMs: number;
  /** Time one request may take once its head arrived, body and answer included (default 120 s). */
  requestTimeoutMs: number;
}

/** The defaults of {@link ServeLimits}. */
export const DEFAULT_SERVE_LIMITS: Readonly<ServeLimits> = {
  maxConnections: 256,
  maxConnectionsPerClient: 32,
  headerTimeoutMs: 10_000,
  maxHeadBytes: 64 * 1024,
  bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS,
  requestTimeoutMs: 120_000,
};

/** How long after the body bound the guard waits for the app's 408 to pass before closing. */
const BODY_GRACE_MS = 1_000;

/** Where and how to listen. */
export interface ListenOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  limits?: Partial<ServeLimits>;
  /** Which client a connection counts for (default {@link clientKey}); `null`: the total only. */
  clientKey?: (addr: Deno.Addr) => string | null;
}

/** A listening guarded server. */
export interface GuardedServer {
  /** The address the guard listens on. */
  addr: Deno.NetAddr;
  /** Stops accepting, lets requests in progress finish (a few seconds at most), then closes everything. */
  shutdown(): Promise<void>;
}

/** How long shutdown waits for requests in progress. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Listens on `hostname:port` and serves `handler` behind the guard. Throws
 * what `Deno.listen` throws (see {@link listenError} for the words).
 *
 * The guard runs on a worker thread of its own: it accepts one connection
 * per turn of its event loop and passes each request on in several more,
 * and on the thread that answers requests those turns wait for whatever
 * else runs there (a read of the index holds it for its whole statement),
 * so under load a request would wait for many of them before it is even
 * read. A `clientKey` function cannot cross to another thread: with one,
 * the guard runs on this thread (tests).
 */
export async function listenGuarded(
  handler: (request: Request) => Response | Promise<Response>,
  options: ListenOptions,
): Promise<GuardedServer> {
  const limits = { ...DEFAULT_SERVE_LIMITS, ...options.limits };
  const inner = await startInner(handler);
  const setup = {
    hostname: options.hostname,
    port: options.port,
    limits,
    inner: inner.address,
  };
  let guard: GuardedServer;
  try {
    guard = options.clientKey
      ? guardConnections({ ...setup, clientKey: options.clientKey })
      : await guardOnWorker(setup);
  } catch (error) {
    await inner.close();
    throw error;
  }
  return {
    addr: guard.addr,
    shutdown: async () => {
      await guard.shutdown();
      await inner.close();
    },
  };
}

/** What the guard needs: where to listen, its bounds, and where requests go. */
export interface GuardSetup {
  hostname: string;
  port: number;
  limits: ServeLimits;
  inner: InnerAddress;
  clientKey?: (addr: Deno.Addr) => string | null;
}

/** Messages of the guard's worker (`_listen_worker.ts`). */
export type GuardWorkerMessage =
  | { kind: "listening"; addr: Deno.NetAddr }
  | { kind: "failed"; name: string; message: string }
  | { kind: "closed" };

async function guardOnWorker(
  setup: Omit<GuardSetup, "clientKey">,
): Promise<GuardedServer> {
  const worker = new Worker(
    new URL("./_listen_worker.ts", import.meta.url),
    { type: "module" },
  );
  const messages: GuardWorkerMessage[] = [];
  let wake = () => {};
  const next = async (): Promise<GuardWorkerMessage> => {
    while (messages.length === 0) await new Promise<void>((r) => wake = r);
    return messages.shift()!;
  };
  worker.onmessage = (event: MessageEvent<GuardWorkerMessage>) => {
    messages.push(event.data);
    wake();
  };
  worker.onerror = (event) => {
    event.preventDefault();
    messages.push({ kind: "failed", name: "Error", message: event.message });
    wake();
  };
  worker.postMessage(setup);
  const first = await next();
  if (first.kind !== "listening") {
    worker.terminate();
    throw first.kind === "failed"
      ? rebuildError(first.name, first.message)
      : new Error("The connection guard stopped before listening");
  }
  return {
    addr: first.addr,
    shutdown: async () => {
      worker.postMessage("shutdown");
      // Closed, or failed meanwhile: either way nothing is left to close.
      while ((await next()).kind === "listening");
      worker.terminate();
    },
  };
}

/** The error `Deno.listen` threw on the worker, as its own class again (for {@link listenError}). */
function rebuildError(name: string, message: string): Error {
  const errors = Deno.errors as unknown as Record<
    string,
    new (message: string) => Error
  >;
  const Class = Object.hasOwn(errors, name) ? errors[name] : undefined;
  return Class ? new Class(message) : new Error(message);
}

/** Listens and relays connections to the inner server, on the calling thread (the worker's, or this one's). */
export function guardConnections(setup: GuardSetup): GuardedServer {
  const { limits } = setup;
  const listener = Deno.listen({ hostname: setup.hostname, port: setup.port });
  const connect = () => connectInner(setup.inner);
  const keyOf = setup.clientKey ?? clientKey;
  const perClient = new ClientSlots(limits.maxConnectionsPerClient);
  const open = new Set<Deno.Conn>();
  /** Connections that have not delivered a request head yet. */
  const waiting = new Set<Deno.Conn>();
  const relays = new Set<Promise<void>>();
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        if (open.size >= limits.maxConnections) {
          void answerAndClose(conn, BUSY);
          continue;
        }
        const client = keyOf(conn.remoteAddr);
        if (!perClient.take(client)) {
          void answerAndClose(conn, busyClient(limits.maxConnectionsPerClient));
          continue;
        }
        open.add(conn);
        waiting.add(conn);
        const relay = relayConnection(
          conn,
          connect,
          limits,
          () => waiting.delete(conn),
        )
          .catch(() => {})
          .finally(() => {
            perClient.give(client);
            open.delete(conn);
            waiting.delete(conn);
            closeQuietly(conn);
            relays.delete(relay);
          });
        relays.add(relay);
      }
    } catch {
      // The listener was closed.
    }
  })();
  return {
    addr: listener.addr as Deno.NetAddr,
    shutdown: async () => {
      closeQuietly(listener);
      await accepting;
      // Nothing is in progress on a connection that has sent no request yet.
      for (const conn of waiting) closeQuietly(conn);
      await settleWithin(
        Promise.allSettled(relays),
        SHUTDOWN_GRACE_MS,
        () => undefined,
      );
      for (const conn of open) closeQuietly(conn);
      await Promise.allSettled(relays);
    },
  };
}

/** Open connections per client, each client up to a share. */
class ClientSlots {
  readonly #share: number;
  readonly #open = new Map<string, number>();

  constructor(share: number) {
    this.#share = share;
  }

  /** Counts one more connection of `client`; false when it already holds its share. */
  take(client: string | null): boolean {
    if (client === null) return true;
    const held = this.#open.get(client) ?? 0;
    if (held >= this.#share) return false;
    this.#open.set(client, held + 1);
    return true;
  }

  give(client: string | null): void {
    if (client === null) return;
    const held = (this.#open.get(client) ?? 1) - 1;
    if (held <= 0) this.#open.delete(client);
    else this.#open.set(client, held);
  }
}

/**
 * The client a connection counts for: its IPv4 address, the /64 of its IPv6
 * address (one host holds a whole /64), or `null` for loopback and
 * non-network peers, which share the total only.
 */
export function clientKey(addr: Deno.Addr): string | null {
  if (addr.transport !== "tcp" && addr.transport !== "udp") return null;
  const host = addr.hostname.toLowerCase().replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1];
  const v4 = mapped ?? (host.includes(":") ? null : host);
  if (v4 !== null) return v4.startsWith("127.") ? null : v4;
  const groups = expandIpv6(host);
  if (groups === null) return host;
  if (groups.every((g, i) => g === (i === 7 ? 1 : 0))) return null;
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** The eight groups of an IPv6 address, or `null` when it is not one. */
function expandIpv6(host: string): number[] | null {
  const halves = host.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").map((g) => parseInt(g, 16));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...Array(missing).fill(0), ...tail];
  return groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)
    ? null
    : groups;
}

/** Says why the server could not listen, and what to change (for `serve` and `demo` alike). */
export function listenError(
  error: unknown,
  host: string,
  port: number,
): unknown {
  const shown = clipValue(host);
  const where = `${host.includes(":") ? `[${shown}]` : shown}:${port}`;
  if (error instanceof Deno.errors.AddrInUse) {
    return new ConfigError(
      `Cannot listen on ${where}: the port is in use; choose another --port`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new ConfigError(
      `Cannot listen on ${where}: permission denied; choose a --port above 1023`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.AddrNotAvailable) {
    return new ConfigError(
      `Cannot listen on ${where}: the address is not on this machine; check --host`,
      { cause: error },
    );
  }
  // Deno says "invalid host" with a URIError, and a failed name lookup only in
  // a plain Error's message; neither names the flag or what to do.
  if (error instanceof URIError) {
    return new ConfigError(
      `--host ${shown} is not a host name or IP address; give one such as 127.0.0.1 (the port goes in --port)`,
      { cause: error },
    );
  }
  if (
    error instanceof Error &&
    error.message.startsWith("failed to lookup address information")
  ) {
    return new ConfigError(
      `Cannot listen on ${where}: the host name does not resolve; check --host`,
      { cause: error },
    );
  }
  return error;
}

// ---- the server behind the guard ----

/** Where the inner server listens: a Unix socket, or loopback TCP where there are none. */
export type InnerAddress =
  | { transport: "unix"; path: string }
  | { transport: "tcp"; port: number };

interface Inner {
  address: InnerAddress;
  close(): Promise<void>;
}

function connectInner(address: InnerAddress): Promise<Deno.Conn> {
  return address.transport === "unix"
    ? Deno.connect({ transport: "unix", path: address.path })
    : Deno.connect({ hostname: "127.0.0.1", port: address.port });
}

async function startInner(
  handler: (request: Request) => Response | Promise<Response>,
): Promise<Inner> {
  const serve = (request: Request) => handler(request);
  if (Deno.build.os === "windows") {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      serve,
    );
    return {
      address: { transport: "tcp", port: server.addr.port },
      close: () => server.shutdown(),
    };
  }
  // A private directory (0700): no other user can reach the socket.
  const dir = await Deno.makeTempDir({ prefix: "trace-serve-" });
  const path = `${dir}/http.sock`;
  const server = Deno.serve({ path, onListen: () => {} }, serve);
  return {
    address: { transport: "unix", path },
    close: async () => {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

// ---- one connection ----

const encoder = new TextEncoder();
const BUSY = answer(
  503,
  "Service Unavailable",
  "Too many open connections; retry shortly",
);
/** The answer to a client past its share of connections. */
function busyClient(share: number): Uint8Array {
  return answer(
    503,
    "Service Unavailable",
    `Too many open connections from your address (at most ${share}); close some and retry`,
  );
}

/**
 * The answer to a head that did not arrive in time (408) or whole (431):
 * the app's JSON error (`{error: {code, message}}`) when the part that
 * arrived names a path whose errors are JSON, one line of text otherwise.
 * The words are fixed by the bounds, never by what the client sent.
 */
function headRefusal(
  kind: "timeout" | "too_large",
  limits: ServeLimits,
  received: Uint8Array,
): Uint8Array {
  const [status, reason, message] = kind === "timeout"
    ? [
      408,
      "Request Timeout",
      `Cannot read the request: its head did not arrive within ${
        limits.headerTimeoutMs / 1000
      } s; send the request line and headers at once`,
    ] as const
    : [
      431,
      "Request Header Fields Too Large",
      `Cannot read the request: its head is longer than ${
        sizeWords(limits.maxHeadBytes)
      }; send fewer or shorter headers (cookies, a long URL)`,
    ] as const;
  if (!refusedAsJson(received)) return answer(status, reason, message);
  const code = CODE_BY_STATUS[status]!;
  return answer(status, reason, message, { code });
}

function sizeWords(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/**
 * Writes a whole answer: `message` as one line of text, or with `json` as the
 * app's JSON error carrying that code.
 */
function answer(
  status: number,
  reason: string,
  message: string,
  json?: { code: string },
): Uint8Array {
  const [type, body] = json
    ? [
      "application/json",
      JSON.stringify({ error: { code: json.code, message } }),
    ]
    : ["text/plain; charset=utf-8", `${message}\n`];
  const bytes = encoder.encode(body);
  const head = encoder.encode(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: ${type}\r\n` +
      `Content-Length: ${bytes.length}\r\n${
        status === 503 ? "Retry-After: 1\r\n" : ""
      }\r\n`,
  );
  const out = new Uint8Array(head.length + bytes.length);
  out.set(head);
  out.set(bytes, head.length);
  return out;
}

/** Most bytes of a refused head the guard reads for its request line. */
const REQUEST_LINE_SCAN_BYTES = 8 * 1024;

/**
 * Whether the refused head's request line names a path whose errors the app
 * answers as JSON. A target that is still arriving counts only by a prefix
 * that decides it (`/api/…`), and bytes that are no request line answer text.
 */
function refusedAsJson(received: Uint8Array): boolean {
  let start = 0;
  while (
    start < received.length &&
    (received[start] === CR || received[start] === LF)
  ) start++;
  const text = new TextDecoder().decode(
    received.subarray(start, start + REQUEST_LINE_SCAN_BYTES),
  );
  const newline = text.search(/\r?\n/);
  const line = newline === -1 ? text : text.slice(0, newline);
  const match = /^[A-Za-z]+ ([^ ]*)( |$)/.exec(line);
  if (!match) return false;
  const target = match[1]!;
  if (match[2] === "" && newline === -1) {
    return /^\/(api|v1|mcp)\//.test(target);
  }
  return answersJsonErrors(pathOf(target));
}

/** The path of a request target (origin or absolute form), dot segments resolved; "" for any other. */
function pathOf(target: string): string {
  if (!target.startsWith("/") && !/^https?:\/\//i.test(target)) return "";
  try {
    return new URL(target, "http://guard.invalid").pathname;
  } catch {
    return "";
  }
}

async function relayConnection(
  conn: Deno.Conn,
  connect: () => Promise<Deno.Conn>,
  limits: ServeLimits,
  onHead: () => void,
): Promise<void> {
  const head = await readHead(conn, limits);
  if (head.kind === "head") onHead();
  if (head.kind !== "head") {
    if (head.kind !== "closed") {
      await answerAndClose(
        conn,
        headRefusal(head.kind, limits, head.received),
      );
    }
    return;
  }
  const upstream = await connect();
  const closeBoth = () => {
    closeQuietly(upstream);
    closeQuietly(conn);
  };
  const deadline = setTimeout(closeBoth, limits.requestTimeoutMs);
  const body = requestBody(head.head);
  body.feed(head.rest);
  const bodyDeadline = body.done() ? undefined : setTimeout(() => {
    if (!body.done()) closeBoth();
  }, limits.bodyTimeoutMs + BODY_GRACE_MS);
  try {
    await writeAll(upstream, withConnectionClose(head.head));
    if (head.rest.length > 0) await writeAll(upstream, head.rest);
    // The request body flows on while the answer comes back; the answer
    // ending (the server closes after it) ends the exchange. A client that
    // stops sending before its body is complete ends the body for the server
    // too, which would otherwise wait for the rest until the request bound;
    // one that half-closes after a whole request still gets its answer.
    void copy(conn, upstream, body.feed).then(() => {
      if (!body.done()) upstream.closeWrite().catch(() => {});
    });
    await copy(upstream, conn);
  } finally {
    clearTimeout(deadline);
    clearTimeout(bodyDeadline);
    closeQuietly(upstream);
  }
}

/** Tells when the body of a request has all arrived, from the bytes after its head. */
interface BodyProgress {
  feed(bytes: Uint8Array): void;
  done(): boolean;
}

/** Follows a chunked body by its framing, any other by its `Content-Length`. */
function requestBody(headBytes: Uint8Array): BodyProgress {
  const head = new TextDecoder().decode(headBytes);
  if (isChunkedHead(head)) {
    const chunked = new ChunkedBodyEnd();
    return { feed: (bytes) => chunked.feed(bytes), done: () => chunked.done };
  }
  const expected = contentLength(head);
  let received = 0;
  return {
    feed: (bytes) => received += bytes.length,
    done: () => received >= expected,
  };
}

/** The `Content-Length` of a head as text (0 when absent or not one plain number). */
function contentLength(head: string): number {
  const values = [
    ...head.matchAll(/^content-length:[ \t]*(\d{1,15})[ \t]*\r?$/gim),
  ]
    .map((match) => Number(match[1]));
  return values.length === 1 ? values[0]! : 0;
}

type HeadResult =
  | { kind: "head"; head: Uint8Array; rest: Uint8Array }
  /** `received`: what arrived of the head, for the words of the refusal. */
  | { kind: "timeout" | "too_large"; received: Uint8Array }
  | { kind: "closed" };

const LF = 10;
const CR = 13;

/** Reads until the end of the request head, within the head deadline and size. */
async function readHead(
  conn: Deno.Conn,
  limits: ServeLimits,
): Promise<HeadResult> {
  const buffer = new Uint8Array(limits.maxHeadBytes);
  let length = 0;
  const deadline = performance.now() + limits.headerTimeoutMs;
  while (length < buffer.length) {
    // A read left pending here ends when the connection is closed.
    const read = conn.read(buffer.subarray(length)).catch(() => null);
    const n = await settleWithin(
      read,
      deadline - performance.now(),
      () => "expired" as const,
    );
    if (n === "expired") {
      return { kind: "timeout", received: buffer.subarray(0, length) };
    }
    if (n === null) return { kind: "closed" };
    const from = Math.max(0, length - 3);
    length += n;
    const end = headEnd(buffer, from, length);
    if (end !== -1) {
      return {
        kind: "head",
        head: buffer.slice(0, end),
        rest: buffer.slice(end, length),
      };
    }
  }
  return { kind: "too_large", received: buffer };
}

/** Index just past the blank line that ends the head (`\n\n` or `\n\r\n`), or -1. */
function headEnd(bytes: Uint8Array, from: number, to: number): number {
  // Blank lines before the request line are allowed and skipped.
  let start = 0;
  while (start < to && (bytes[start] === CR || bytes[start] === LF)) start++;
  for (let i = Math.max(from, start); i < to - 1; i++) {
    if (bytes[i] !== LF) continue;
    if (bytes[i + 1] === LF) return i + 2;
    if (bytes[i + 1] === CR && i + 2 < to && bytes[i + 2] === LF) return i + 3;
  }
  return -1;
}

/** The head with every `Connection` header replaced by `Connection: close`. */
function withConnectionClose(head: Uint8Array): Uint8Array {
  const kept: Uint8Array[] = [];
  let start = 0;
  let first = true;
  while (start < head.length) {
    let end = head.indexOf(LF, start);
    end = end === -1 ? head.length : end + 1;
    const line = head.subarray(start, end);
    const blank = line.length <= 2 && (line[0] === CR || line[0] === LF);
    if (blank && !first) {
      kept.push(encoder.encode("Connection: close\r\n"), line);
    } else if (first || !isConnectionHeader(line)) kept.push(line);
    if (!blank) first = false;
    start = end;
  }
  const out = new Uint8Array(kept.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of kept) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const CONNECTION = encoder.encode("connection:");

function isConnectionHeader(line: Uint8Array): boolean {
  if (line.length < CONNECTION.length) return false;
  for (let i = 0; i < CONNECTION.length; i++) {
    // ASCII lower-casing: header names are tokens.
    if ((line[i]! | 0x20) !== CONNECTION[i]! && line[i] !== CONNECTION[i]) {
      return false;
    }
  }
  return true;
}

async function copy(
  from: Deno.Conn,
  to: Deno.Conn,
  onBytes?: (bytes: Uint8Array) => void,
): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await from.read(buffer);
      if (n === null) return;
      onBytes?.(buffer.subarray(0, n));
      await writeAll(to, buffer.subarray(0, n));
    }
  } catch {
    // Either side went away: the exchange is over.
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let offset = 0; offset < bytes.length;) {
    offset += await conn.write(bytes.subarray(offset));
  }
}

/** Sends a short answer and closes, without waiting long for a client that does not read. */
async function answerAndClose(
  conn: Deno.Conn,
  bytes: Uint8Array,
): Promise<void> {
  await settleWithin(
    writeAll(conn, bytes).catch(() => {}),
    1_000,
    () => undefined,
  );
  closeQuietly(conn);
}

function closeQuietly(closable: { close(): void }): void {
  try {
    closable.close();
  } catch {
    // Already closed.
  }
}

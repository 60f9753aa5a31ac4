/**
 * The one request-body reader of the server: size bounds on the wire and
 * after inflating gzip, both checked while reading so an oversized or
 * decompression-bomb body is never held whole, and a deadline for the whole
 * body, so a client that trickles bytes is answered 408 instead of holding
 * the request open. The ingest routes (`/api/events`, `/v1/traces`) read
 * through it directly; every other write (forms, sign-in, small JSON
 * bodies) through {@link readSmallBody}, which keeps the bytes in Hono's
 * body cache, since Hono's own readers have no deadline. Refusals are
 * `HTTPException`s (400, 408, 413, 415).
 *
 * @module
 */

import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { readBounded } from "../lib/bytes.ts";
import { quoteValue } from "../lib/echo.ts";
import { MAX_BATCH_EVENTS } from "../lib/obs/ingest/mod.ts";
import { parseStrictJson, StrictJsonError } from "../lib/json/strict_json.ts";
import { settleWithin } from "../lib/settle_within.ts";
import { createGunzip } from "node:zlib";

/** Size and time bounds for one request body. */
export interface BodyLimits {
  /** Most bytes accepted on the wire (compressed, when gzip). */
  maxBytes: number;
  /** Most bytes accepted after inflating gzip. */
  maxDecodedBytes: number;
  /** Time the whole body may take to arrive, from the first read (default 60 s). */
  timeoutMs?: number;
  /** Content codings accepted (default: {@link CONTENT_ENCODINGS}). */
  encodings?: readonly ContentEncoding[];
  /** What a refusal for size tells the client to do (default: send smaller batches). */
  remedy?: string;
}

/** Default time a body may take to arrive. */
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;

/** Default bounds: 8 MiB on the wire, 32 MiB inflated, 60 s to arrive. */
export const DEFAULT_BODY_LIMITS: BodyLimits = {
  maxBytes: 8 * 1024 * 1024,
  maxDecodedBytes: 32 * 1024 * 1024,
  timeoutMs: DEFAULT_BODY_TIMEOUT_MS,
};

/** A content coding a body may arrive in. */
export type ContentEncoding = "identity" | "gzip";

/** Content codings accepted in `Content-Encoding`. */
export const CONTENT_ENCODINGS: readonly ContentEncoding[] = [
  "identity",
  "gzip",
];

/** Default bound of a body read by {@link readSmallBody}. */
export const SMALL_BODY_MAX_BYTES = 64 * 1024;

/** Whether the body is a page's form (URL-encoded or multipart). */
export function isFormBody(c: Context): boolean {
  const type = c.req.header("content-type") ?? "";
  return type.startsWith("application/x-www-form-urlencoded") ||
    type.startsWith("multipart/form-data");
}

/** The media type of `Content-Type`, lower-cased, without parameters (`""` when absent). */
export function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0]!.trim()
    .toLowerCase();
}

/** Refuses a request without reading its body (the body is discarded first). */
export async function refuseUnread(
  request: Request,
  status: 413 | 415,
  message: string,
): Promise<never> {
  await request.body?.cancel().catch(() => {});
  throw new HTTPException(status, { message });
}

/**
 * The `charset` parameters of the Content-Type, lower-cased and unquoted
 * (parameters split where no quoted string is open).
 */
function declaredCharsets(request: Request): string[] {
  const header = request.headers.get("content-type") ?? "";
  const params =
    header.match(/;\s*[^=;\s]+\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^;]*)/g) ?? [];
  const charsets: string[] = [];
  for (const param of params) {
    const at = param.indexOf("=");
    const name = param.slice(1, at).trim().toLowerCase();
    const value = param.slice(at + 1).trim().replace(/^"(.*)"$/, "$1");
    if (name === "charset") charsets.push(value.toLowerCase());
  }
  return charsets;
}

/**
 * Refuses (415, the body discarded) a body that declares a charset other
 * than UTF-8, or more than one: every body is read as UTF-8, and another
 * charset would be misread, never converted.
 */
export async function refuseForeignCharset(request: Request): Promise<void> {
  const charsets = declaredCharsets(request);
  if (charsets.every((charset) => charset === "utf-8" || charset === "utf8")) {
    if (charsets.length <= 1) return;
  }
  const named =
    charsets.length === 1 && /^[a-z0-9._-]{1,32}$/.test(charsets[0]!)
      ? `charset "${charsets[0]}" is`
      : charsets.length > 1
      ? "more than one charset is"
      : "the declared charset is";
  return await refuseUnread(
    request,
    415,
    `Cannot read the request: ${named} not supported; send UTF-8`,
  );
}

/** Reads the body of `request`, inflating gzip, within `limits`. */
export async function readRequestBody(
  request: Request,
  limits: BodyLimits = DEFAULT_BODY_LIMITS,
): Promise<Uint8Array> {
  await refuseForeignCharset(request);
  const coding = (request.headers.get("content-encoding") ?? "").trim()
    .toLowerCase() || "identity";
  const encodings: readonly string[] = limits.encodings ?? CONTENT_ENCODINGS;
  if (!encodings.includes(coding)) {
    return await refuseUnread(
      request,
      415,
      `Cannot read the request: Content-Encoding ${
        quoteValue(coding.slice(0, 32))
      } is not supported here; send ${
        encodings.length === 1 ? "the body uncompressed" : "identity or gzip"
      }`,
    );
  }
  const remedy = limits.remedy ?? "send smaller batches";
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > limits.maxBytes) {
    return await refuseUnread(
      request,
      413,
      tooLargeMessage("request body", limits.maxBytes, remedy),
    );
  }
  if (!request.body) return new Uint8Array();
  const deadline = performance.now() +
    (limits.timeoutMs ?? DEFAULT_BODY_TIMEOUT_MS);
  if (coding === "identity") {
    return await collect(request.body, {
      limit: limits.maxBytes,
      what: "request body",
      deadline,
      remedy,
    });
  }
  const inflated = request.body
    .pipeThrough(byteLimit(limits.maxBytes, remedy))
    .pipeThrough(gunzipMembers());
  try {
    return await collect(inflated, {
      limit: limits.maxDecodedBytes,
      what: "decompressed request body",
      deadline,
      remedy,
    });
  } catch (error) {
    if (error instanceof HTTPException) throw error;
    // The inflater's message says nothing the client can act on beyond this.
    throw new HTTPException(400, {
      message: "Cannot read the request: the gzip body is corrupt",
    });
  }
}

/** Decodes strict UTF-8; throws a 400 `HTTPException` otherwise. */
export function utf8Text(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HTTPException(400, {
      message: "Cannot read the request: the body is not valid UTF-8",
    });
  }
}

/** Refuses a batch of more than {@link MAX_BATCH_EVENTS} items with 413. */
export function requireBatchSize(
  count: number,
  noun: "events" | "spans",
): void {
  if (count > MAX_BATCH_EVENTS) {
    throw new HTTPException(413, {
      message:
        `Cannot ingest the batch: ${count} ${noun} exceed the limit of ${MAX_BATCH_EVENTS}; send smaller batches`,
    });
  }
}

function tooLargeMessage(what: string, limit: number, remedy: string): string {
  return `Cannot read the request: the ${what} exceeds ${limit} bytes; ${remedy}`;
}

/**
 * Inflates a gzip body member after member. A gzip file may hold several
 * members one after the other (`cat a.gz b.gz`), and its content is all of
 * them; `DecompressionStream` stops after the first and calls the rest
 * corrupt. Node's inflater reads every member and still refuses a
 * truncated body or bytes after the last member. Wired by hand, not with
 * `Duplex.toWeb(createGunzip())`: Deno's adapter still enqueues once the
 * reader has cancelled (at the decoded-size bound), an uncaught TypeError.
 */
function gunzipMembers(): TransformStream<BufferSource, Uint8Array> {
  const gunzip = createGunzip();
  return new TransformStream({
    start(controller) {
      gunzip.on("data", (chunk: Uint8Array) => controller.enqueue(chunk));
      gunzip.on("error", (error: Error) => controller.error(error));
    },
    transform(chunk) {
      const bytes = ArrayBuffer.isView(chunk)
        ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        : new Uint8Array(chunk);
      return new Promise<void>((resolve, reject) =>
        gunzip.write(bytes, (error) => error ? reject(error) : resolve())
      );
    },
    flush() {
      return new Promise<void>((resolve, reject) => {
        gunzip.once("end", resolve);
        gunzip.once("error", reject);
        gunzip.end();
      });
    },
    cancel() {
      gunzip.destroy();
    },
  });
}

/** Passes bytes through until `limit` is passed, then errors the pipe. */
function byteLimit(limit: number, remedy: string): TransformStream<
  Uint8Array<ArrayBuffer>,
  BufferSource
> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > limit) {
        controller.error(
          new HTTPException(413, {
            message: tooLargeMessage("request body", limit, remedy),
          }),
        );
      } else controller.enqueue(chunk);
    },
  });
}

/** Bounds of one {@link collect}. */
interface CollectBounds {
  limit: number;
  what: string;
  /** `performance.now()` by which the last byte must have arrived. */
  deadline: number;
  remedy: string;
}

async function collect(
  stream: ReadableStream<Uint8Array>,
  bounds: CollectBounds,
): Promise<Uint8Array> {
  const bytes = await readBounded(
    stream,
    bounds.limit,
    (reader) => readBefore(reader, bounds.deadline, bounds.remedy),
  );
  if (bytes === null) {
    throw new HTTPException(413, {
      message: tooLargeMessage(bounds.what, bounds.limit, bounds.remedy),
    });
  }
  return bytes;
}

/**
 * One read that must finish by `deadline`; past it the stream is cancelled
 * and 408 thrown, with the body's own `remedy` (a sign-in form has no
 * batches to split).
 */
async function readBefore(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  deadline: number,
  remedy: string,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  const result = await settleWithin(
    reader.read(),
    deadline - performance.now(),
    () => "expired" as const,
  );
  if (result !== "expired") return result;
  // Not awaited: cancelling waits for the pending read, which a trickling
  // client may hold for as long as it likes.
  reader.cancel().catch(() => {});
  throw new HTTPException(408, {
    message:
      `Cannot read the request: the body did not arrive in time; send it at once, or ${remedy}`,
  });
}

/**
 * The body as strict JSON, at most `maxBytes` sent and decoded: refused as
 * {@link readRequestBody} refuses, then a `StrictJsonError` for text that is
 * not strict JSON (a key given twice included), for the caller to answer.
 * `remedy` is what a refusal for size or time tells the client to do.
 */
export async function readStrictJson(
  request: Request,
  maxBytes: number,
  remedy?: string,
): Promise<unknown> {
  const bytes = await readRequestBody(request, {
    maxBytes,
    maxDecodedBytes: maxBytes,
    ...(remedy === undefined ? {} : { remedy }),
  });
  return parseStrictJson(utf8Text(bytes));
}

/** The contract's response bound, applied to adapter requests too. */
const ADAPTER_BODY_MAX_BYTES = 1024 * 1024;

/**
 * The body of a staging adapter request (the demo app's and `/staging`'s),
 * read by {@link readStrictJson} within {@link ADAPTER_BODY_MAX_BYTES}: a
 * Content-Type other than `application/json` answers 415 unread (the runner
 * sends `application/json`; a form or `text/plain` body is what a web page
 * can send without asking, and is never taken as JSON); text that is not
 * strict JSON answers 400 `body: …` naming where it breaks (a field given
 * twice is refused, never read as its last value), so both adapters refuse
 * a body alike and say why.
 */
export async function readAdapterJson(request: Request): Promise<unknown> {
  const type = mediaType(request);
  if (type !== "application/json") {
    return await refuseUnread(
      request,
      415,
      `Cannot read the request: Content-Type ${
        type === ""
          ? "is missing"
          : `${quoteValue(type.slice(0, 64))} is not accepted`
      }; send Content-Type: application/json`,
    );
  }
  try {
    return await readStrictJson(
      request,
      ADAPTER_BODY_MAX_BYTES,
      // One document or one list of ids: there is no batch to split.
      "send a smaller body",
    );
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    throw new HTTPException(400, { message: `body: ${jsonProblem(error)}` });
  }
}

/** Why a body is not strict JSON, without repeating what it holds. */
export function jsonProblem(error: StrictJsonError): string {
  if (error.reason === "duplicate_key") {
    return `The body gives a field twice (line ${error.line}, column ${error.column}); send each field once`;
  }
  return `The body is not valid JSON (line ${error.line}, column ${error.column}: ${error.detail})`;
}

/**
 * The body of a write that is not ingest, read once within `maxBytes` and
 * `timeoutMs` (the first caller's bounds hold: the access middleware reads
 * it first), uncompressed only (browsers never compress a request).
 * The bytes are kept in Hono's body cache, so `c.req.parseBody()`,
 * `text()` and `json()` read them from there instead of the stream.
 */
export async function readSmallBody(
  c: Context,
  maxBytes = SMALL_BODY_MAX_BYTES,
  timeoutMs = DEFAULT_BODY_TIMEOUT_MS,
): Promise<Uint8Array> {
  // Hono's type names the cached value; what it keeps is the promise of it.
  const cache = c.req.bodyCache as unknown as {
    arrayBuffer?: Promise<ArrayBuffer>;
  };
  if (cache.arrayBuffer) return new Uint8Array(await cache.arrayBuffer);
  const read = readRequestBody(c.req.raw, {
    maxBytes,
    maxDecodedBytes: maxBytes,
    timeoutMs,
    encodings: ["identity"],
    remedy: "send a smaller body",
  }).then((bytes) => Uint8Array.from(bytes).buffer);
  cache.arrayBuffer = read;
  return new Uint8Array(await read);
}

/**
 * A strict JSON body of a write that is not ingest, read by
 * {@link readSmallBody}: 415 unless it is `application/json` (`hint` says
 * what to send), 400 naming the position for text that is not strict JSON
 * (a key given twice included).
 */
export async function readSmallJson(
  c: Context,
  hint: string,
  maxBytes = SMALL_BODY_MAX_BYTES,
): Promise<unknown> {
  if (mediaType(c.req.raw) !== "application/json") {
    return await refuseUnread(c.req.raw, 415, hint);
  }
  const bytes = await readSmallBody(c, maxBytes);
  try {
    return parseStrictJson(utf8Text(bytes));
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    throw new HTTPException(400, { message: jsonProblem(error) });
  }
}

/**
 * The fields of a URL-encoded or multipart body, read as UTF-8 (another
 * declared charset answers 415) by {@link readSmallBody}; a body that is
 * not such a form (a multipart body without its boundary, say) answers 400.
 */
export async function readFormBody(
  c: Context,
  options: { all?: boolean } = {},
): Promise<Record<string, string | File | (string | File)[]>> {
  await readSmallBody(c);
  try {
    // From the body cache, which parseBody keeps too: a handler may read it again.
    return await c.req.parseBody({ all: options.all ?? false });
  } catch {
    throw new HTTPException(400, {
      message: "Cannot read the request: the form body is malformed",
    });
  }
}

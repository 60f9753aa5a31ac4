/**
 * Reads an OTLP/HTTP request body within size bounds, inflating gzip on the
 * way. Both bounds stop the read as soon as they are passed, so an oversized
 * or decompression-bomb body is never held in memory whole.
 *
 * @module
 */

import { OtlpRequestError } from "./otlp_error.ts";

/** Size bounds for one request body. */
export interface OtlpBodyLimits {
  /** Most bytes accepted on the wire (compressed, when gzip). */
  maxBytes: number;
  /** Most bytes accepted after inflating gzip. */
  maxDecodedBytes: number;
}

/** Default bounds: 8 MiB on the wire, 32 MiB inflated. */
export const OTLP_BODY_LIMITS: OtlpBodyLimits = {
  maxBytes: 8 * 1024 * 1024,
  maxDecodedBytes: 32 * 1024 * 1024,
};

/** Content codings accepted in `Content-Encoding`. */
export const OTLP_CONTENT_ENCODINGS = ["identity", "gzip"] as const;

/** Reads `body`, inflating it when `contentEncoding` is gzip; throws {@link OtlpRequestError} (400, 413, 415). */
export async function readOtlpBody(
  body: ReadableStream<Uint8Array<ArrayBuffer>> | null,
  contentEncoding: string | null,
  limits: OtlpBodyLimits = OTLP_BODY_LIMITS,
): Promise<Uint8Array> {
  const coding = (contentEncoding ?? "").trim().toLowerCase() || "identity";
  if (coding !== "identity" && coding !== "gzip") {
    await body?.cancel();
    throw new OtlpRequestError(
      415,
      `Cannot read the OTLP request: Content-Encoding "${coding}" is not supported; send identity or gzip`,
    );
  }
  if (!body) return new Uint8Array();
  if (coding === "identity") {
    return await collect(body, limits.maxBytes, "request body");
  }
  const inflated = body
    .pipeThrough(byteLimit(limits.maxBytes))
    .pipeThrough(new DecompressionStream("gzip"));
  try {
    return await collect(
      inflated,
      limits.maxDecodedBytes,
      "decompressed request body",
    );
  } catch (error) {
    if (error instanceof OtlpRequestError) throw error;
    throw new OtlpRequestError(
      400,
      `Cannot read the OTLP request: the gzip body is corrupt (${
        (error as Error).message
      })`,
      { cause: error },
    );
  }
}

function tooLarge(what: string, limit: number): OtlpRequestError {
  return new OtlpRequestError(
    413,
    `Cannot read the OTLP request: the ${what} exceeds ${limit} bytes; send smaller batches`,
  );
}

/** Passes bytes through until `limit` is passed, then errors the pipe. */
function byteLimit(limit: number): TransformStream<
  Uint8Array<ArrayBuffer>,
  BufferSource
> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > limit) controller.error(tooLarge("request body", limit));
      else controller.enqueue(chunk);
    },
  });
}

async function collect(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  what: string,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(what, limit);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

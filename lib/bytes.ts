/**
 * Byte streams read whole, up to a bound, and byte chunks joined: what
 * `@std/bytes` and `@std/streams` would give, out of reach here (JSR). Files,
 * standard input and request bodies can be anything (`/dev/zero`, a gzip
 * bomb): a read past what the caller can hold would take the machine's
 * memory before any error could be said, so the stream is cancelled at the
 * bound.
 *
 * @module
 */

/** One read of a stream; the default reads as it comes, a caller may bound its time. */
export type ReadStep = (
  reader: ReadableStreamDefaultReader<Uint8Array>,
) => Promise<ReadableStreamReadResult<Uint8Array>>;

/** The bytes of `stream`, or `null` once it holds more than `limit` bytes. */
export async function readBounded(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  read: ReadStep = (reader) => reader.read(),
): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await read(reader);
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return null;
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return concatBytes(chunks);
}

/** `chunks` joined into one array. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(
    chunks.reduce((size, chunk) => size + chunk.byteLength, 0),
  );
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

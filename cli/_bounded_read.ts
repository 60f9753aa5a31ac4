/**
 * Reads a byte stream whole, up to a bound: files and standard input given
 * to a command can be anything (`/dev/zero`, a gzip bomb), and a read past
 * what the command can hold would take the machine's memory before any
 * error could be said. The stream is cancelled at the bound.
 *
 * @module
 */

/** The bytes of `stream`, or `null` once it holds more than `limit` bytes. */
export async function readBounded(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
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
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

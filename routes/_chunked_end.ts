/**
 * Where a chunked request body ends, for the connection guard of
 * `listen.ts`, which relays bytes to `Deno.serve` and must know whether a
 * body is still arriving once its deadline has passed. `Deno.serve` does
 * the real decoding; this follows only the framing (chunk sizes, the data
 * they announce, the last chunk and its trailer lines) and keeps nothing,
 * which no library offers apart from a whole HTTP parser. Framing it cannot
 * read counts as ended: the server refuses such a body itself.
 *
 * @module
 */

const CR = 13;
const LF = 10;

type State = "size" | "data" | "data_end" | "trailer" | "done";

/** Follows a chunked body fed in pieces; {@link done} once its last chunk and trailer arrived. */
export class ChunkedBodyEnd {
  #state: State = "size";
  /** The size line's hex digits read so far, as a number. */
  #size = 0;
  #sizeDigits = 0;
  #inExtension = false;
  #remaining = 0;
  /** Bytes of the current trailer line (0 when at its start). */
  #lineBytes = 0;

  /** True once the whole body arrived (or its framing could not be read). */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Feeds the next bytes the client sent. */
  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && this.#state !== "done"; i++) {
      const byte = bytes[i]!;
      switch (this.#state) {
        case "size":
          this.#sizeByte(byte);
          break;
        case "data": {
          const take = Math.min(this.#remaining, bytes.length - i);
          this.#remaining -= take;
          i += take - 1;
          if (this.#remaining === 0) this.#state = "data_end";
          break;
        }
        case "data_end":
          // The CRLF after a chunk's data: its LF ends it.
          if (byte === LF) this.#state = "size";
          else if (byte !== CR) this.#state = "done";
          break;
        case "trailer":
          if (byte === LF) {
            if (this.#lineBytes === 0) this.#state = "done";
            this.#lineBytes = 0;
          } else if (byte !== CR) this.#lineBytes++;
          break;
      }
    }
  }

  #sizeByte(byte: number): void {
    if (byte === LF) {
      if (this.#sizeDigits === 0) {
        this.#state = "done";
        return;
      }
      this.#state = this.#size === 0 ? "trailer" : "data";
      this.#remaining = this.#size;
      this.#size = 0;
      this.#sizeDigits = 0;
      this.#inExtension = false;
      this.#lineBytes = 0;
      return;
    }
    if (this.#inExtension || byte === CR) return;
    if (byte === 0x3b) { // ';' starts a chunk extension
      this.#inExtension = true;
      return;
    }
    // Spaces and tabs may follow the size (before an extension or the CRLF).
    if ((byte === 0x20 || byte === 0x09) && this.#sizeDigits > 0) {
      this.#inExtension = true;
      return;
    }
    const digit = hexDigit(byte);
    // Not a size, or one no server would take: the framing ends here.
    if (digit < 0 || ++this.#sizeDigits > 12) {
      this.#state = "done";
      return;
    }
    this.#size = this.#size * 16 + digit;
  }
}

function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Whether a request head (as text) declares a chunked body (`Transfer-Encoding` ending in `chunked`). */
export function isChunkedHead(head: string): boolean {
  const values = [...head.matchAll(/^transfer-encoding:[ \t]*([^\r\n]*)$/gim)]
    .map((match) => match[1]!.trim().toLowerCase());
  return values.length > 0 && /(^|,)\s*chunked$/.test(values.join(","));
}

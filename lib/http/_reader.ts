/**
 * Buffered reads from one connection, each bounded by the request deadline.
 * Lines are CRLF-terminated and decoded as Latin-1 (header bytes, not text);
 * a bare CR or LF inside a line is a framing error rather than a guess.
 *
 * @module
 */

import { errorMessage } from "../errors.ts";
import { ProtocolError, type RequestFailure } from "../contract/protocol.ts";
import type { Deadline } from "./_deadline.ts";

const READ_SIZE = 64 * 1024;
const CR = 13;
const LF = 10;

/** Reads lines and exact byte counts; closes the connection when the budget runs out. */
export class ByteReader {
  readonly #conn: Deno.Conn;
  readonly #deadline: Deadline;
  readonly #onExpire: () => void;
  #buffer = new Uint8Array(0);

  constructor(conn: Deno.Conn, deadline: Deadline, onExpire: () => void) {
    this.#conn = conn;
    this.#deadline = deadline;
    this.#onExpire = onExpire;
  }

  /** One line without its CRLF; `tooLong` is the failure when `limit` bytes pass without one. */
  async readLine(limit: number, tooLong: RequestFailure): Promise<string> {
    let searchFrom = 0;
    for (;;) {
      const end = this.#buffer.indexOf(LF, searchFrom);
      if (end >= 0) {
        if (end > limit + 1) break;
        const line = this.#take(end + 1);
        if (
          end === 0 || line[end - 1] !== CR ||
          line.subarray(0, end - 1).some(isLineBreak)
        ) {
          throw new ProtocolError("framing", "line not terminated by CRLF");
        }
        return latin1(line.subarray(0, end - 1));
      }
      if (this.#buffer.length > limit + 1) break;
      searchFrom = this.#buffer.length;
      if (!await this.#fill()) throw truncated();
    }
    throw new ProtocolError(tooLong, `line longer than ${limit} bytes`);
  }

  /** Exactly `count` bytes. */
  async readExact(count: number): Promise<Uint8Array> {
    const result = new Uint8Array(count);
    let filled = 0;
    while (filled < count) {
      if (this.#buffer.length === 0 && !await this.#fill()) throw truncated();
      const piece = this.#take(Math.min(count - filled, this.#buffer.length));
      result.set(piece, filled);
      filled += piece.length;
    }
    return result;
  }

  /** Waits for the peer to close; any further byte means the framing lied. */
  async expectEnd(): Promise<void> {
    if (this.#buffer.length > 0 || await this.#fill()) {
      throw new ProtocolError(
        "framing",
        "more bytes than the message framing declared",
      );
    }
  }

  #take(count: number): Uint8Array {
    const piece = this.#buffer.subarray(0, count);
    this.#buffer = this.#buffer.subarray(count);
    return piece;
  }

  /** Reads once; false on end of stream. */
  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(READ_SIZE);
    let count: number | null;
    try {
      count = await this.#deadline.race(this.#conn.read(chunk), this.#onExpire);
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      throw new ProtocolError(
        "connect",
        `connection lost while reading the response: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    if (count === null) return false;
    const joined = new Uint8Array(this.#buffer.length + count);
    joined.set(this.#buffer);
    joined.set(chunk.subarray(0, count), this.#buffer.length);
    this.#buffer = joined;
    return true;
  }
}

function isLineBreak(byte: number): boolean {
  return byte === CR || byte === LF;
}

function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return text;
}

function truncated(): ProtocolError {
  return new ProtocolError(
    "framing",
    "connection closed before the response was complete",
  );
}

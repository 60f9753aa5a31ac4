/**
 * Strict JSON for `trace mcp` over stdio, as `/mcp` over HTTP reads its
 * bodies. The SDK's stdio transport parses each stdin line with
 * `JSON.parse`, which reads a key given twice as its last value
 * (`{"id": 1, "id": 2}`). {@link strictStdinLines} sits between stdin and
 * the transport: it reads each line with the strict parser, checks it as
 * `/mcp` does ({@link invalidRequest}: a message that is no JSON-RPC 2.0
 * request, notification or response), passes the lines it accepts on byte
 * for byte (the SDK then parses them as before), and holds back the lines
 * it refuses, naming each to `onRefused`.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { Transform, type TransformCallback } from "node:stream";
import { parseStrictJson, StrictJsonError } from "../json/strict_json.ts";
import {
  INVALID_REQUEST,
  invalidRequest,
  PARSE_ERROR,
  type RpcId,
} from "./rpc_request.ts";

/** A stdin line refused before the transport: where, why in one line, and how to answer it. */
export interface RefusedLine {
  /** 1-based line of stdin. */
  line: number;
  /** 1-based column within the line where the JSON broke; `null` when the whole message is wrong. */
  column: number | null;
  /** What was wrong, e.g. "a key given twice". */
  reason: string;
  /** The JSON-RPC error code to answer with: -32700 (not strict JSON) or -32600 (no JSON-RPC 2.0 message). */
  code: number;
  /** The id to answer with: the request's, when the line gave a valid one, else `null`. */
  id: RpcId | null;
}

/** Options for {@link strictStdinLines}. */
export interface StrictStdinOptions {
  /** Told of every refused line; the line is not passed on. */
  onRefused: (refused: RefusedLine) => void;
  /**
   * A line longer than this is passed on unread, so the transport's own
   * buffer bound refuses it as it always did (the SDK's default: 10 MiB).
   */
  maxLineBytes?: number;
}

const NEWLINE = 0x0a;
const SDK_MAX_BUFFER_BYTES = 10 * 1024 * 1024;

/** A stream to pipe stdin through before the stdio transport reads it. */
export function strictStdinLines(options: StrictStdinOptions): Transform {
  const maxLineBytes = options.maxLineBytes ?? SDK_MAX_BUFFER_BYTES;
  // The start of the line being read, in the chunks it came in (joined
  // once, when its newline arrives: a long line is not copied per chunk).
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // True while the rest of an over-long line goes through unread.
  let passing = false;
  let lineNumber = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: string, done: TransformCallback) {
      let rest = chunk;
      for (let end = rest.indexOf(NEWLINE); end !== -1;) {
        const tail = rest.subarray(0, end + 1);
        rest = rest.subarray(end + 1);
        lineNumber++;
        if (passing) {
          this.push(tail);
          passing = false;
        } else {
          const line = pending.length === 0
            ? tail
            : Buffer.concat([...pending, tail]);
          pending = [];
          pendingBytes = 0;
          const refused = refusal(line, lineNumber);
          if (refused === null) this.push(line);
          else options.onRefused(refused);
        }
        end = rest.indexOf(NEWLINE);
      }
      if (rest.length > 0) {
        if (passing) this.push(rest);
        else {
          pending.push(rest);
          pendingBytes += rest.length;
          if (pendingBytes > maxLineBytes) {
            // The transport's own bound refuses it, as it always did.
            this.push(Buffer.concat(pending));
            pending = [];
            pendingBytes = 0;
            passing = true;
          }
        }
      }
      done();
    },
  });
}

/** Why `line` (ending in its newline) is refused before the transport, or `null`. */
function refusal(line: Buffer, lineNumber: number): RefusedLine | null {
  // Decoded as the SDK decodes it: UTF-8, without the newline or a "\r" before it.
  const text = line.toString("utf8", 0, line.length - 1).replace(/\r$/, "");
  let message: unknown;
  try {
    message = parseStrictJson(text);
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    return {
      line: lineNumber,
      column: error.column,
      reason: error.reason === "duplicate_key"
        ? "a key given twice"
        : error.detail,
      code: PARSE_ERROR,
      id: null,
    };
  }
  // The stdio transport takes no batch: every array is left to it.
  const invalid = invalidRequest(message, { batches: false });
  if (invalid === null) return null;
  return { line: lineNumber, column: null, code: INVALID_REQUEST, ...invalid };
}

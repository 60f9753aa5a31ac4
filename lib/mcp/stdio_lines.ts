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
 * A line longer than `/mcp` takes a body ({@link MCP_MAX_MESSAGE_BYTES}) is
 * refused as soon as it passes that bound, with the id its head gives when
 * one can be read there ({@link leadingId}), and the rest of it is skipped
 * unread up to its newline; the next line is read as usual. The SDK's own
 * bound (10 MiB) is never reached: past it, its transport would close and
 * stop reading stdin for good. Blank lines are dropped, as most stdio
 * servers drop them.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { Transform, type TransformCallback } from "node:stream";
import { parseStrictJson, StrictJsonError } from "../json/strict_json.ts";
import {
  INVALID_REQUEST,
  invalidRequest,
  MCP_MAX_MESSAGE_BYTES,
  PARSE_ERROR,
  type RpcId,
  TOO_LARGE,
} from "./rpc_request.ts";

/** A stdin line refused before the transport: where, why in one line, and how to answer it. */
export interface RefusedLine {
  /** 1-based line of stdin. */
  line: number;
  /** 1-based column within the line where the JSON broke; `null` when the whole message is wrong. */
  column: number | null;
  /** What was wrong, e.g. "a key given twice". */
  reason: string;
  /** The JSON-RPC error code to answer with: -32700 (not strict JSON), -32600 (no JSON-RPC 2.0 message) or -32000 (too long). */
  code: number;
  /** The id to answer with: the request's, when the line gave a valid one (a too-long line: at its head), else `null`. */
  id: RpcId | null;
}

/** Options for {@link strictStdinLines}. */
export interface StrictStdinOptions {
  /** Told of every refused line; the line is not passed on. */
  onRefused: (refused: RefusedLine) => void;
  /**
   * Most bytes one line may hold, its line ending not counted (default
   * {@link MCP_MAX_MESSAGE_BYTES}); a longer one is refused unread.
   */
  maxLineBytes?: number;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** A stream to pipe stdin through before the stdio transport reads it. */
export function strictStdinLines(options: StrictStdinOptions): Transform {
  const maxLineBytes = options.maxLineBytes ?? MCP_MAX_MESSAGE_BYTES;
  // The start of the line being read, in the chunks it came in (joined
  // once, when its newline arrives: a long line is not copied per chunk).
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // True while the rest of a refused over-long line is skipped.
  let skipping = false;
  let lineNumber = 0;
  const refuseTooLong = (parts: Buffer[]) =>
    options.onRefused(tooLong(parts, lineNumber + 1, maxLineBytes));
  return new Transform({
    transform(chunk: Buffer, _encoding: string, done: TransformCallback) {
      let rest = chunk;
      for (let end = rest.indexOf(NEWLINE); end !== -1;) {
        const tail = rest.subarray(0, end + 1);
        rest = rest.subarray(end + 1);
        if (skipping) skipping = false;
        else if (contentBytes(pending, pendingBytes, tail) > maxLineBytes) {
          refuseTooLong([...pending, tail]);
        } else {
          const line = pending.length === 0
            ? tail
            : Buffer.concat([...pending, tail]);
          const fate = lineFate(line, lineNumber + 1);
          if (fate === "pass") this.push(line);
          else if (fate !== "blank") options.onRefused(fate);
        }
        pending = [];
        pendingBytes = 0;
        lineNumber++;
        end = rest.indexOf(NEWLINE);
      }
      if (rest.length > 0 && !skipping) {
        pending.push(rest);
        pendingBytes += rest.length;
        // Over the bound even if a "\r" ends it: refused now, not when
        // (or whether) its newline comes, and not held meanwhile.
        if (pendingBytes > maxLineBytes + 1) {
          refuseTooLong(pending);
          pending = [];
          pendingBytes = 0;
          skipping = true;
        }
      }
      done();
    },
  });
}

/** Bytes of a line without its line ending: the `held` chunks, then `tail`, which ends in its newline. */
function contentBytes(held: Buffer[], heldBytes: number, tail: Buffer): number {
  // A "\r" before the newline may end the last chunk held.
  const beforeNewline = tail.length >= 2
    ? tail[tail.length - 2]
    : held.at(-1)?.at(-1);
  const ending = beforeNewline === CARRIAGE_RETURN ? 2 : 1;
  return heldBytes + tail.length - ending;
}

/** What becomes of a line (ending in its newline) of a readable length. */
function lineFate(
  line: Buffer,
  lineNumber: number,
): "pass" | "blank" | RefusedLine {
  // Decoded as the SDK decodes it: UTF-8, without the newline or a "\r" before it.
  const text = line.toString("utf8", 0, line.length - 1).replace(/\r$/, "");
  if (BLANK.test(text)) return "blank";
  return refusal(text, lineNumber) ?? "pass";
}

/** A line of JSON whitespace only: no message, so no answer. */
const BLANK = /^[ \t\r]*$/;

/** The refusal of a line longer than `maxLineBytes`, of which `parts` are the first bytes read. */
function tooLong(
  parts: Buffer[],
  lineNumber: number,
  maxLineBytes: number,
): RefusedLine {
  return {
    line: lineNumber,
    column: null,
    // The words `/mcp` refuses an over-long body with.
    reason:
      `the message exceeds ${maxLineBytes} bytes; send smaller tool arguments`,
    code: TOO_LARGE,
    id: leadingId(headOf(parts, ID_SCAN_BYTES)),
  };
}

/** How much of a too-long line's head is searched for its id. */
const ID_SCAN_BYTES = 4096;

function headOf(parts: Buffer[], bytes: number): string {
  const head = Buffer.concat(parts, Math.min(bytes, sumOfLengths(parts)));
  return head.toString("utf8");
}

function sumOfLengths(parts: Buffer[]): number {
  return parts.reduce((sum, part) => sum + part.length, 0);
}

const JSON_STRING = String.raw`"(?:[^"\\\u0000-\u001f]|\\.)*"`;
const JSON_SCALAR = String
  .raw`(?:${JSON_STRING}|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)`;
/**
 * An object whose members before `"id"` all have scalar values, up to the
 * end of the id's value: how clients write a request (`jsonrpc`, `id`,
 * `method`, then `params`), so the id is read without the line.
 */
const LEADING_ID = new RegExp(
  String
    .raw`^[ \t\r]*\{[ \t\r]*(?:${JSON_STRING}[ \t\r]*:[ \t\r]*${JSON_SCALAR}[ \t\r]*,[ \t\r]*)*?"id"[ \t\r]*:[ \t\r]*(${JSON_STRING}|-?(?:0|[1-9]\d*))[ \t\r]*[,}]`,
);

/**
 * The request id a line's head gives before any nested value, or `null`
 * (JSON-RPC's answer when the id cannot be told): a line too long to read
 * is still answered to the request it carried, when that is plain.
 */
export function leadingId(head: string): RpcId | null {
  const token = LEADING_ID.exec(head)?.[1];
  if (token === undefined) return null;
  const id: unknown = JSON.parse(token);
  if (typeof id === "string" || Number.isSafeInteger(id)) return id as RpcId;
  return null;
}

/** Why the text of a line is refused before the transport, or `null`. */
function refusal(text: string, lineNumber: number): RefusedLine | null {
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

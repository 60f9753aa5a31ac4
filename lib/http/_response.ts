/**
 * Response framing per RFC 9112, read strictly: a status line, CRLF headers,
 * then a body delimited by exactly one Content-Length or by chunked coding.
 * Anything ambiguous (both, disagreeing lengths, other transfer codings, no
 * framing at all, so that truncation would be undetectable) is refused.
 *
 * @module
 */

import { ProtocolError } from "../contract/protocol.ts";
import type { ByteReader } from "./_reader.ts";
import { concatBytes } from "../bytes.ts";

/** Upper bound on status line plus headers (and, separately, trailers). */
export const MAX_HEAD_BYTES = 64 * 1024;

const MAX_CHUNK_LINE = 4096;
const STATUS_LINE = /^HTTP\/1\.[01] ([1-9]\d\d)(?: .*)?$/;
const FIELD = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/;

/** Status and headers (lower-case names, every value kept). */
export interface ResponseHead {
  status: number;
  headers: Map<string, string[]>;
}

/**
 * Reads the status line and header fields of the final answer. Interim 1xx
 * answers before it are read and skipped, as RFC 9110 (section 15.2) asks of
 * every client, within the same byte budget; a 101 is final, since nothing
 * asked to switch protocols.
 */
export async function readHead(reader: ByteReader): Promise<ResponseHead> {
  const budget = { left: MAX_HEAD_BYTES };
  for (;;) {
    const statusLine = await readHeadLine(reader, budget);
    const match = STATUS_LINE.exec(statusLine);
    if (!match) throw framing("malformed status line");
    const status = Number(match[1]);
    const headers = await readFields(reader, budget);
    if (status >= 200 || status === 101) return { status, headers };
  }
}

/** Reads the body as framed by `head`, refusing more than `maxBytes`. */
export async function readBody(
  reader: ByteReader,
  head: ResponseHead,
  maxBytes: number,
): Promise<Uint8Array> {
  const encoding = head.headers.get("transfer-encoding");
  const lengths = head.headers.get("content-length");
  if (encoding && lengths) {
    throw framing("both Content-Length and Transfer-Encoding present");
  }
  if (encoding) {
    if (encoding.join(",").trim().toLowerCase() !== "chunked") {
      throw framing("unsupported Transfer-Encoding");
    }
    return await readChunked(reader, maxBytes);
  }
  if (!lengths) {
    throw framing(
      "neither Content-Length nor chunked encoding present; the adapter must send a Content-Length header or a chunked body",
    );
  }
  const length = contentLength(lengths);
  if (length > maxBytes) throw tooLarge(maxBytes);
  return await reader.readExact(length);
}

/** One line of the head, charged to the budget every line of it shares (interim answers' too). */
async function readHeadLine(
  reader: ByteReader,
  budget: { left: number },
): Promise<string> {
  const line = await reader.readLine(Math.max(0, budget.left), "too_large");
  budget.left -= line.length + 2;
  return line;
}

async function readFields(
  reader: ByteReader,
  budget: { left: number },
): Promise<Map<string, string[]>> {
  const headers = new Map<string, string[]>();
  for (;;) {
    const line = await readHeadLine(reader, budget);
    if (line === "") return headers;
    if (line.startsWith(" ") || line.startsWith("\t")) {
      throw framing("obsolete header line folding");
    }
    const field = FIELD.exec(line);
    if (!field) throw framing("malformed header field");
    const name = field[1]!.toLowerCase();
    headers.set(name, [...headers.get(name) ?? [], field[2]!]);
  }
}

function contentLength(values: string[]): number {
  // "Content-Length: 5, 5" and repeated identical headers are allowed; anything else is not.
  const items = values.flatMap((value) => value.split(",")).map((item) =>
    item.trim()
  );
  if (!items.every((item) => /^\d{1,15}$/.test(item))) {
    throw framing("invalid Content-Length");
  }
  if (new Set(items.map(Number)).size !== 1) {
    throw framing("multiple differing Content-Length values");
  }
  return Number(items[0]);
}

async function readChunked(
  reader: ByteReader,
  maxBytes: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const size = CHUNK_SIZE.exec(
      await reader.readLine(MAX_CHUNK_LINE, "framing"),
    );
    if (!size) throw framing("malformed chunk size line");
    const length = parseInt(size[1]!, 16);
    if (length === 0) break;
    // Refuse before reading: the cap is checked against the declared size.
    if (total + length > maxBytes) throw tooLarge(maxBytes);
    chunks.push(await reader.readExact(length));
    total += length;
    if (await reader.readLine(0, "framing") !== "") {
      throw framing("chunk data not followed by CRLF");
    }
  }
  await readFields(reader, { left: MAX_HEAD_BYTES });
  return concatBytes(chunks);
}

function framing(detail: string): ProtocolError {
  return new ProtocolError("framing", `invalid response framing: ${detail}`);
}

function tooLarge(maxBytes: number): ProtocolError {
  return new ProtocolError(
    "too_large",
    `response body exceeds ${maxBytes} bytes`,
  );
}

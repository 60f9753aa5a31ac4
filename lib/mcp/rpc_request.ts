/**
 * The one check both MCP transports (`/mcp` over HTTP, `trace mcp` over
 * stdio) make of a message once it has been read as strict JSON and before
 * the SDK sees it. JSON-RPC 2.0 answers a message without `"jsonrpc": "2.0"`
 * with -32600 (Invalid Request), carrying the request's id when it gave a
 * valid one; the SDK's HTTP transport answers it with -32700 (Parse error)
 * and its stdio transport with -32600 but a null id. JSON-RPC also answers
 * an empty batch `[]` with one -32600, where the HTTP transport, which takes
 * batches (MCP 2025-03-26), answers 202 as if it held notifications only.
 * The stdio transport takes no batch at all (MCP 2025-06-18 dropped them),
 * so there `[]` is left to it and answered as every batch is. Every other
 * message goes to the SDK unchanged.
 *
 * @module
 */

import { kindOf } from "./_kind.ts";

/** JSON-RPC 2.0's error code for JSON that cannot be read. */
export const PARSE_ERROR = -32700;
/** JSON-RPC 2.0's error code for JSON that is no valid request. */
export const INVALID_REQUEST = -32600;

/** A JSON-RPC request id as MCP allows it: a string or an integer. */
export type RpcId = string | number;

/** A message answered with -32600 before the SDK sees it. */
export interface InvalidRequest {
  /** The request's id when it gave a valid one, else `null` (JSON-RPC's rule). */
  id: RpcId | null;
  /** What was wrong and what to send, in one line without the value. */
  reason: string;
}

/** Options for {@link invalidRequest}. */
export interface InvalidRequestOptions {
  /** Whether the transport takes batches (HTTP does; stdio leaves every array to the SDK). */
  batches: boolean;
}

/** Why `message` (parsed strict JSON) is an invalid request the SDK would answer wrongly, or `null`. */
export function invalidRequest(
  message: unknown,
  options: InvalidRequestOptions,
): InvalidRequest | null {
  if (Array.isArray(message)) {
    return options.batches && message.length === 0
      ? { id: null, reason: "the batch is empty; send at least one message" }
      : null;
  }
  const fields = isObject(message) ? message : null;
  if (fields?.jsonrpc === "2.0") return null;
  const got = fields === null
    ? kindOf(message)
    : !Object.hasOwn(fields, "jsonrpc")
    ? 'an object without "jsonrpc"'
    : typeof fields.jsonrpc === "string"
    ? '"jsonrpc" with another version'
    : `"jsonrpc" as ${kindOf(fields.jsonrpc)}`;
  return {
    id: fields === null ? null : validId(fields.id),
    reason:
      `a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got ${got})`,
  };
}

/** A string or an integer a double holds exactly (a rounded id would answer another request). */
function validId(id: unknown): RpcId | null {
  if (typeof id === "string" || Number.isSafeInteger(id)) return id as RpcId;
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

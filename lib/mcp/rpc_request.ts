/**
 * The one check both MCP transports (`/mcp` over HTTP, `trace mcp` over
 * stdio) make of a message once it has been read as strict JSON and before
 * the SDK sees it. JSON-RPC 2.0 answers a message that is no valid request
 * with -32600 (Invalid Request), carrying the request's id when it gave a
 * valid one; the SDK's HTTP transport answers it with -32700 (Parse error)
 * and its stdio transport with -32600 but a null id. So a message is
 * answered here when it has no `"jsonrpc": "2.0"`, or has it but is no
 * request, notification or response: no `method` and no `result` or
 * `error`, a `method` that is no string, an `id` that is no string or
 * integer (MCP takes no null id), `params` that is no object (MCP names
 * every parameter), or members a request does not have (which the SDK
 * refuses too). A response (`result` or `error`, no `method`) goes to the
 * SDK as it is: JSON-RPC answers no response.
 *
 * JSON-RPC also answers an empty batch `[]` with one -32600, where the HTTP
 * transport, which takes batches (MCP 2025-03-26), answers 202 as if it
 * held notifications only. A batch holding a message refused here is
 * refused whole, with one -32600 naming the first such item: answering the
 * others would mean handing the SDK part of the batch, whose own rules
 * count the whole (one `initialize` alone, at most 100 messages) and whose
 * answer (an object for one request, 202 for none) would have to be merged
 * with ours. The stdio transport takes no batch at all (MCP 2025-06-18
 * dropped them), so there every array is left to it and answered as every
 * batch is. Every other message goes to the SDK unchanged.
 *
 * @module
 */

import { isObject, kindOf } from "./_kind.ts";

/** JSON-RPC 2.0's error code for JSON that cannot be read. */
export const PARSE_ERROR = -32700;
/** JSON-RPC 2.0's error code for JSON that is no valid request. */
export const INVALID_REQUEST = -32600;
/**
 * The code a message too long to read is answered with: one of JSON-RPC's
 * implementation-defined server errors, the one the SDK's HTTP transport
 * answers a refused body with.
 */
export const TOO_LARGE = -32000;

/** Most bytes of one JSON-RPC message either transport reads: a `/mcp` body, a `trace mcp` stdin line. */
export const MCP_MAX_MESSAGE_BYTES = 1024 * 1024;

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
  if (!Array.isArray(message)) return invalidMessage(message);
  // The stdio transport takes no batch: every array is left to it.
  if (!options.batches) return null;
  if (message.length === 0) {
    return {
      id: null,
      reason: "the batch is empty; send at least one message",
    };
  }
  for (const [i, item] of message.entries()) {
    const invalid = invalidMessage(item);
    // The answer is the batch's, which has no id: it names no request.
    if (invalid !== null) {
      return {
        id: null,
        reason: `the batch was refused whole at item [${i}]: ${invalid.reason}`,
      };
    }
  }
  return null;
}

/** Why one message (an item of a batch, or no batch) is an invalid request, or `null`. */
function invalidMessage(message: unknown): InvalidRequest | null {
  if (!isObject(message)) {
    return { id: null, reason: versionRule(kindOf(message)) };
  }
  const reason = message.jsonrpc === "2.0"
    ? shapeProblem(message)
    : versionRule(
      versionKind(message.jsonrpc, Object.hasOwn(message, "jsonrpc")),
    );
  return reason === null ? null : { id: validId(message.id), reason };
}

function versionRule(got: string): string {
  return `a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got ${got})`;
}

/** What an object gave for `"jsonrpc"` other than `"2.0"`. */
function versionKind(jsonrpc: unknown, given: boolean): string {
  if (!given) return 'an object without "jsonrpc"';
  return typeof jsonrpc === "string"
    ? '"jsonrpc" with another version'
    : `"jsonrpc" as ${kindOf(jsonrpc)}`;
}

/** The members a request has; a notification has them but `id`. */
const REQUEST_MEMBERS = new Set(["jsonrpc", "id", "method", "params"]);

/** Why a JSON-RPC 2.0 object is no request, notification or response, or `null`. */
function shapeProblem(fields: Record<string, unknown>): string | null {
  if (!Object.hasOwn(fields, "method")) {
    // A response: the SDK's to read, and JSON-RPC answers none.
    if (Object.hasOwn(fields, "result") || Object.hasOwn(fields, "error")) {
      return null;
    }
    return 'a JSON-RPC 2.0 message has "method" (a request or notification) or "result" or "error" (a response) (got none of them)';
  }
  if (typeof fields.method !== "string") {
    return `"method" is a string, the name of the method to call (got ${
      kindOf(fields.method)
    })`;
  }
  if (Object.hasOwn(fields, "id") && validId(fields.id) === null) {
    return `"id" is a string or an integer (got ${idKind(fields.id)})`;
  }
  if (Object.hasOwn(fields, "params") && !isObject(fields.params)) {
    return `"params" is an object of named parameters (got ${
      kindOf(fields.params)
    })`;
  }
  const others = Object.keys(fields).filter((key) => !REQUEST_MEMBERS.has(key));
  if (others.length === 0) return null;
  // Counted, not named: like every refusal here, it quotes nothing sent.
  return `a request or notification has only "jsonrpc", "id", "method" and "params" (got ${others.length} other member${
    others.length === 1 ? "" : "s"
  })`;
}

/** A refused id's kind; a number is told apart from the integers taken. */
function idKind(id: unknown): string {
  if (typeof id !== "number") return kindOf(id);
  return Number.isInteger(id)
    ? "an integer past ±(2^53 - 1), which a double rounds; send it as a string"
    : "a number with a fraction";
}

/** A string or an integer a double holds exactly (a rounded id would answer another request). */
function validId(id: unknown): RpcId | null {
  if (typeof id === "string" || Number.isSafeInteger(id)) return id as RpcId;
  return null;
}

/**
 * The JSON-RPC body of a `/mcp` request, read before the SDK's transport
 * sees it: strict JSON, as every other body the server reads. The transport
 * parses with `JSON.parse`, which reads a key given twice as its last value
 * (`{"id": 1, "id": 2}`) and answers any parse error without saying where.
 * A body that is no JSON-RPC 2.0 request, notification or response, an
 * empty batch, or a batch holding such a message, is answered here as
 * `trace mcp` answers it ({@link invalidRequest}). The transport takes the
 * parsed body as it is and checks the rest.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import { StrictJsonError } from "../lib/json/strict_json.ts";
import {
  INVALID_REQUEST,
  invalidRequest,
  PARSE_ERROR,
  type RpcId,
} from "../lib/mcp/mod.ts";
import { mediaType, readStrictJson } from "./_body.ts";

/** The code the transport answers a refused body with. */
const SERVER_ERROR = -32000;

/**
 * The parsed body of `request`, or the JSON-RPC answer that refuses it;
 * `undefined` when the body is not JSON at all (the transport then answers
 * the wrong media type).
 */
export async function readMcpBody(
  request: Request,
  maxBytes: number,
): Promise<{ body: unknown } | Response | undefined> {
  if (mediaType(request) !== "application/json") return undefined;
  let body: unknown;
  try {
    body = await readStrictJson(
      request,
      maxBytes,
      "send smaller tool arguments",
    );
  } catch (error) {
    if (error instanceof HTTPException) {
      const message = error.status === 413
        ? `The request body exceeds ${maxBytes} bytes; send smaller tool arguments`
        : error.message;
      return rpcError(error.status, SERVER_ERROR, message);
    }
    if (!(error instanceof StrictJsonError)) throw error;
    const what = error.reason === "duplicate_key"
      ? "a key given twice"
      : error.detail;
    return rpcError(
      400,
      PARSE_ERROR,
      `Parse error: ${what} at line ${error.line}, column ${error.column}`,
    );
  }
  // The transport takes batches: an empty one, or one holding a bad message, is refused here.
  const invalid = invalidRequest(body, { batches: true });
  if (invalid === null) return { body };
  return rpcError(
    400,
    INVALID_REQUEST,
    `Invalid Request: ${invalid.reason}`,
    invalid.id,
  );
}

function rpcError(
  status: number,
  code: number,
  message: string,
  id: RpcId | null = null,
): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } }, {
    status,
  });
}

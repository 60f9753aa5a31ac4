/**
 * The one mapping from errors to HTTP answers. Domain errors map by their
 * stable code, `HTTPException`s by status, and every refusal of the
 * request's own input answers 400 `invalid_request`; storage failures and unknown
 * errors get a generic message (the detail goes to the server log only). A
 * broken ledger or audit trail says so, with the entry and `trace ledger
 * verify` or `trace audit verify`, as the CLI and MCP do: a bare 500 would
 * hide the one fact the operator needs.
 *
 * @module
 */

import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type ErrorCode, errorMessage, TraceError } from "../lib/errors.ts";
import {
  BatchTooLargeError,
  IngestBatchError,
  IngestConflictError,
} from "../lib/obs/ingest/mod.ts";
import { type EventIssue, ObsNotInitializedError } from "../lib/obs/mod.ts";
import { ErasureUnmatchedError } from "../lib/obs/maint/mod.ts";
import { type CauseCode, CODE_BY_STATUS } from "./_error_codes.ts";
import { noteRefusal } from "./_request_log.ts";

/** HTTP status for each stable error code. */
export const STATUS_BY_CODE: Record<ErrorCode, ContentfulStatusCode> = {
  config_invalid: 400,
  usage: 400,
  not_found: 404,
  conflict: 409,
  // A well-formed request a rule refuses (e.g. a cursor under other filters) is the client's to fix.
  refused: 400,
  protocol: 502,
  transport: 502,
  ledger_integrity: 500,
  // Privileged actions are refused until the trail is repaired.
  audit_integrity: 503,
  storage: 503,
  unauthorized: 401,
  forbidden: 403,
  // An applied erasure whose event ids match no event: the events it names are not there.
  erasure_unmatched: 404,
};

export { type ServerLog, stderrLog } from "./_server_log.ts";
import type { ServerLog } from "./_server_log.ts";

/** The JSON body of an error answer. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    /** Refused items, at most 100. */
    items?: EventIssue[];
    /** Refused items counted but not listed in `items`. */
    unlisted_items?: number;
    /**
     * For `erasure_unmatched`: the receipt that erased the same subject
     * already (the ids were most likely erased by it), or `null` when none.
     */
    receipt_id?: string | null;
  };
}

/** What an error answer carries besides its code and message. */
type ErrorDetails = Omit<ErrorBody["error"], "code" | "message">;

/** How the server answers an error. */
export interface ErrorAnswer {
  status: ContentfulStatusCode;
  body: ErrorBody;
  /** What the server log gets (never sent); `null` when the answer says it all. */
  logDetail: string | null;
}

/**
 * An `HTTPException` whose answer names its cause with a code of its own
 * (`hook_missing`), where its status's code would not say it; without one
 * it answers its status's code.
 */
export class CodedHttpException extends HTTPException {
  /** The code its answer carries, or `null` for its status's. */
  readonly code: CauseCode | null;

  constructor(
    status: ContentfulStatusCode,
    message: string,
    code: CauseCode | null = null,
  ) {
    super(status, { message });
    this.code = code;
  }
}

/** Throws 405 for the request's method, naming the allowed ones (also sent as `Allow`). */
export function methodNotAllowed(c: Context, allow: readonly string[]): never {
  c.header("Allow", allow.join(", "));
  throw new HTTPException(405, {
    message: `Method ${c.req.method} is not allowed on ${c.req.path}; use ${
      allow.join(" or ")
    }`,
  });
}

/** Maps any thrown value to its answer. */
export function errorResponse(error: unknown): ErrorAnswer {
  if (error instanceof HTTPException) {
    const status = error.status as ContentfulStatusCode;
    const own = error instanceof CodedHttpException ? error.code : null;
    return answer(
      status,
      own ?? CODE_BY_STATUS[status] ?? "http",
      error.message,
    );
  }
  if (error instanceof TraceError) return traceErrorAnswer(error);
  return {
    ...answer(500, "internal", "Internal server error"),
    logDetail: describeForLog(error),
  };
}

/** {@link errorResponse}, writing the detail of a server-side failure to `log` once. */
export function reportError(
  error: unknown,
  request: Request,
  log: ServerLog,
): ErrorAnswer {
  const result = errorResponse(error);
  noteRefusal(request, result.body.error.code);
  if (result.logDetail !== null) {
    const path = new URL(request.url).pathname;
    log(`${request.method} ${path}: ${result.logDetail}`);
  }
  return result;
}

function traceErrorAnswer(error: TraceError): ErrorAnswer {
  // Past a batch bound: the request is too large, whatever its content.
  if (error instanceof BatchTooLargeError) {
    return answer(413, "payload_too_large", errorMessage(error));
  }
  const status = STATUS_BY_CODE[error.code];
  if (error.code === "storage") {
    // File paths and SQLite messages are the operator's business, not the client's.
    const message = error instanceof ObsNotInitializedError
      ? "The trace index is not initialized; run trace obs init on the server"
      : "The trace index is unavailable; check the server log";
    return {
      ...answer(status, "storage", message),
      logDetail: describeForLog(error),
    };
  }
  if (error.code === "ledger_integrity" || error.code === "audit_integrity") {
    // The message names an entry number and the command that shows what is
    // wrong, nothing of the data: what the operator needs, safe to send.
    return {
      ...answer(status, error.code, errorMessage(error)),
      logDetail: describeForLog(error),
    };
  }
  if (status >= 500) {
    return {
      ...answer(500, "internal", "Internal server error"),
      logDetail: describeForLog(error),
    };
  }
  return answer(
    status,
    answerCode(error.code),
    errorMessage(error),
    detailsOf(error),
  );
}

/**
 * The code an answer carries for a domain error: a request's own input that
 * failed its rules is `invalid_request`, as a body that cannot be read is,
 * whichever layer refused it (`config_invalid` and `usage` name the CLI's
 * config files and flags, which an HTTP client does not have).
 */
function answerCode(code: ErrorCode): string {
  return code === "config_invalid" || code === "usage"
    ? "invalid_request"
    : code;
}

/** The refused items an error lists, how many more it counted, or the receipt it names. */
function detailsOf(error: TraceError): ErrorDetails {
  if (error instanceof ErasureUnmatchedError) {
    return { receipt_id: error.receiptId };
  }
  if (error instanceof IngestBatchError) {
    return {
      items: error.items,
      ...(error.unlisted > 0 ? { unlisted_items: error.unlisted } : {}),
    };
  }
  return error instanceof IngestConflictError ? { items: error.items } : {};
}

function answer(
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details: ErrorDetails = {},
): ErrorAnswer {
  return {
    status,
    body: { error: { code, message, ...details } },
    logDetail: null,
  };
}

function describeForLog(error: unknown): string {
  const name = error instanceof Error ? error.name : "Error";
  const cause = error instanceof Error && error.cause !== undefined
    ? ` (cause: ${errorMessage(error.cause)})`
    : "";
  return `${name}: ${errorMessage(error)}${cause}`;
}

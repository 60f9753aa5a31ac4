/** The one mapping from domain error codes to HTTP statuses. */

import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ErrorCode } from "../lib/errors.ts";

/** HTTP status for each stable error code. */
export const STATUS_BY_CODE: Record<ErrorCode, ContentfulStatusCode> = {
  config_invalid: 400,
  usage: 400,
  not_found: 404,
  conflict: 409,
  refused: 422,
  protocol: 502,
  transport: 502,
  ledger_integrity: 500,
  storage: 503,
  unauthorized: 401,
  forbidden: 403,
};

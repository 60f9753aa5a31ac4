/**
 * Refused attempts at privileged actions, in the audit trail. Every request
 * a signed-in operator sends to a privileged route leaves an entry, however
 * it ends. What a route runs, it records itself (`_operator_io.ts`, the
 * erasure API) and marks with {@link noteAudited}; what is refused before
 * that, or without an entry, the access middleware records once the route
 * has answered ({@link recordRefusal}): a missing CSRF token, a body too
 * large or malformed, a field that breaks a rule (a reason naming an
 * email), a query string where none is taken, a host hook or key the server
 * lacks, a method the route does not take.
 *
 * Such an entry says who (operator, role, how signed in, scope), which
 * action, how it ended (`refused`, or `failed` when the server could not
 * serve it: a 5xx) and a short code why ({@link refusalDetail}); never a
 * field of the request, which failed the very checks that keep content,
 * emails and tokens out of the trail.
 *
 * Refusals before the caller is known are not recorded: a wrong or missing
 * token or session, and the guards that run before sign-in (Host, Origin
 * and `Sec-Fetch-Site`, a body without a Content-Type). An entry names an
 * account; without one there is nobody to name, and writing them would let
 * anyone who can reach the port (or a web page, through a visitor's
 * browser) append chained entries without limit to a trail that is never
 * pruned. The request log (`trace serve` prints it) has one content-free
 * line for each. Refusals of a signed-in account are not rate-limited:
 * each is attributable to that account, as its actions that ran are.
 *
 * @module
 */

import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import {
  type Action,
  appendAudit,
  OperatorInputError,
  type Principal,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import { errorMessage } from "../lib/errors.ts";
import type { CauseCode } from "./_error_codes.ts";
import {
  CodedHttpException,
  type ErrorAnswer,
  errorResponse,
  type ServerLog,
} from "./_errors.ts";

/**
 * An HTTP refusal that carries the short code the audit trail records as its
 * `detail`, and the code its answer carries when its status's would not say
 * why (a 501: `hook_missing`).
 */
export class HttpRefusal extends CodedHttpException {
  /** Why, as a content-free code (`csrf`, `query_string`, `hook_missing:…`). */
  readonly detail: string;

  constructor(
    status: ContentfulStatusCode,
    message: string,
    detail: string,
    options: { code?: CauseCode } = {},
  ) {
    super(status, message, options.code ?? null);
    this.detail = detail;
  }
}

const audited = new WeakSet<Request>();

/** Marks the request as recorded: the route wrote (or tried to write) its entry. */
export function noteAudited(c: Context): void {
  audited.add(c.req.raw);
}

/** Whether the request's entry was written (or tried) already. */
function isAudited(c: Context): boolean {
  return audited.has(c.req.raw);
}

/**
 * The `detail` of a refused attempt: the refusal's own code, the field a
 * request broke (`invalid_request:reason`), else the code of `answered`,
 * the error's answer (`payload_too_large`, `method_not_allowed`, …).
 */
function refusalDetail(error: unknown, answered: ErrorAnswer): string {
  if (error instanceof HttpRefusal) return error.detail;
  if (error instanceof OperatorInputError && error.field !== null) {
    return `invalid_request:${error.field}`;
  }
  return answered.body.error.code;
}

/** Where a refusal is written. */
export interface RefusalDeps {
  db: TraceDb;
  log: ServerLog;
}

/**
 * Records `error` as the outcome of `principal`'s attempt at `action`
 * (`refused`, or `failed` for a 5xx), unless the request was recorded
 * already. The request was refused whatever happens here: a trail that
 * cannot take the entry is only logged.
 */
export async function recordRefusal(
  c: Context,
  deps: RefusalDeps,
  attempt: { principal: Principal; action: Action },
  error: unknown,
): Promise<void> {
  if (isAudited(c)) return;
  noteAudited(c);
  const { principal, action } = attempt;
  const answered = errorResponse(error);
  try {
    await appendAudit(deps.db, {
      actor: principal,
      action,
      scope: principal.scope,
      outcome: answered.status >= 500 ? "failed" : "refused",
      detail: refusalDetail(error, answered),
    });
  } catch (failure) {
    deps.log(
      `audit: cannot record a refused ${action}: ${errorMessage(failure)}`,
    );
  }
}

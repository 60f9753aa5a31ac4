/**
 * What the operator endpoints share: reading a small JSON or form body,
 * choosing a page or JSON answer, and running a privileged action under
 * the audit trail (the entry is written before anything the action found
 * is answered; when it cannot be written the answer is 503 and nothing
 * else: a broken trail's answer, code `audit_integrity`, names the broken
 * entry and `trace audit verify`). Hook failures become content-free 502
 * answers (code `hook_failed`), logged by hook name and failure kind only;
 * an identity resolution that found no account in scope is a 404.
 *
 * @module
 */

import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import {
  type Action,
  appendAudit,
  type AuditEntry,
  AuditIntegrityError,
  type AuditRecord,
  type AuditTargets,
  fieldLabel,
  HookError,
  isUnresolvedIdentity,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import { quoteValue } from "../lib/echo.ts";
import { errorMessage, TraceError } from "../lib/errors.ts";
import { isFormBody, readFormBody, readSmallJson } from "./_body.ts";
import { CodedHttpException, type ServerLog } from "./_errors.ts";
import { noteAudited } from "./_audit_refusals.ts";
import type { UiEnv } from "./ui/context.ts";

/** What a privileged endpoint needs to audit. */
export interface AuditDeps {
  db: TraceDb;
  log: ServerLog;
}

/**
 * The body's fields: a JSON object, or a form's string fields (its CSRF
 * token removed). A field given twice is refused, as strict JSON refuses a
 * duplicate key; values are never repeated in errors.
 */
export async function readFields(c: Context): Promise<Record<string, unknown>> {
  if (isFormBody(c)) return formFields(await readFormBody(c, { all: true }));
  const body = await readSmallJson(
    c,
    "Send Content-Type: application/json (or a form) to this endpoint",
  );
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new HTTPException(400, {
      message: "Send a JSON object of fields",
    });
  }
  return body as Record<string, unknown>;
}

function formFields(
  body: Record<string, string | File | (string | File)[]>,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, values] of Object.entries(body)) {
    const value = Array.isArray(values) && values.length === 1
      ? values[0]
      : values;
    if (Array.isArray(value)) {
      throw new HTTPException(400, {
        message: `The form gives ${
          fieldLabel(key)
        } more than once; send each field once`,
      });
    }
    if (key === "_csrf") continue;
    if (typeof value !== "string") {
      throw new HTTPException(400, {
        message: "Send text fields only; files are not accepted here",
      });
    }
    // An empty optional field of a form means "not given".
    if (value !== "") fields[key] = value;
  }
  return fields;
}

/** The query string's parameters as single values; a repeated one is refused. */
export function singleParams(c: Context): Record<string, string> {
  const params = new URL(c.req.url).searchParams;
  const fields: Record<string, string> = {};
  for (const key of params.keys()) {
    const values = params.getAll(key);
    if (values.length > 1) {
      throw new HTTPException(400, {
        message: `The parameter ${quoteValue(key)} may be given once`,
      });
    }
    fields[key] = values[0]!;
  }
  return fields;
}

/** What to record about a privileged action, besides its outcome. */
export interface AuditPlan<T> {
  action: Action;
  targets: AuditTargets;
  reason?: string | null;
  /** More targets once the action has found them (the event's tenant). */
  found?: (result: T) => AuditTargets;
}

const AUDIT_DOWN =
  "The audit trail could not be written, so the action was refused; the server log has the detail";

/**
 * The answer to an audit entry that could not be written: a broken trail
 * says where and what to run (`audit_integrity`, its message names no
 * data); a database that cannot write says only that (the detail is the
 * server log's).
 */
function auditDown(error: unknown, log: ServerLog): unknown {
  log(`audit: ${errorMessage(error)}`);
  if (error instanceof AuditIntegrityError) return error;
  return new HTTPException(503, { message: AUDIT_DOWN });
}

/**
 * Runs a privileged action and records it. A failure is recorded (refused
 * or failed, with a short code) and then answered; a success is answered
 * only once its entry is written.
 */
export async function audited<T>(
  c: Context<UiEnv>,
  deps: AuditDeps,
  plan: AuditPlan<T>,
  run: () => Promise<T>,
): Promise<{ result: T; entry: AuditEntry }> {
  let result: T;
  try {
    result = await run();
  } catch (error) {
    return await auditFailure(c, deps, plan, error);
  }
  const entry = await record(c, deps, {
    ...recordOf(c, plan),
    targets: { ...plan.targets, ...plan.found?.(result) },
    outcome: "succeeded",
  });
  return { result, entry };
}

/** Records a privileged action that did not succeed (refused or failed), then throws its answer. */
export async function auditFailure<T>(
  c: Context<UiEnv>,
  deps: AuditDeps,
  plan: AuditPlan<T>,
  error: unknown,
): Promise<never> {
  await record(c, deps, {
    ...recordOf(c, plan),
    targets: plan.targets,
    outcome: refusal(error) ? "refused" : "failed",
    detail: failureCode(error),
  });
  throw httpError(error, deps.log);
}

/** Who acted, in which scope, doing what and why: the part of an entry every outcome shares. */
function recordOf<T>(
  c: Context<UiEnv>,
  plan: AuditPlan<T>,
): Pick<AuditRecord, "actor" | "action" | "scope" | "reason"> {
  const principal = c.get("principal");
  return {
    actor: principal,
    action: plan.action,
    scope: principal.scope,
    reason: plan.reason ?? null,
  };
}

async function record(
  c: Context,
  deps: AuditDeps,
  entry: AuditRecord,
): Promise<AuditEntry> {
  noteAudited(c);
  try {
    return await appendAudit(deps.db, entry);
  } catch (error) {
    throw auditDown(error, deps.log);
  }
}

/** Answers an audit failure of a write that carried its own entry (a draft). */
export function auditUnavailable(
  c: Context,
  error: unknown,
  log: ServerLog,
): never {
  noteAudited(c);
  throw auditDown(error, log);
}

function refusal(error: unknown): boolean {
  return error instanceof TraceError && error.code === "forbidden";
}

/** A short, content-free code of why an action did not succeed. */
function failureCode(error: unknown): string {
  if (error instanceof HookError) return `${error.hook}:${error.failure}`;
  if (error instanceof TraceError) return error.code;
  if (error instanceof HTTPException) return `http_${error.status}`;
  return "internal";
}

/**
 * Hook failures as content-free 502s, code `hook_failed` (refusals stay 403;
 * an identity resolution with no account in scope is 404 `not_found`);
 * everything else as it was.
 */
export function httpError(error: unknown, log: ServerLog): unknown {
  if (error instanceof HookError && isUnresolvedIdentity(error)) {
    log(`hook: ${error.hook} ${error.failure}`);
    return new CodedHttpException(404, error.message);
  }
  if (error instanceof HookError && error.failure !== "refused") {
    log(`hook: ${error.hook} ${error.failure}`);
    return new CodedHttpException(502, error.message, "hook_failed");
  }
  return error;
}

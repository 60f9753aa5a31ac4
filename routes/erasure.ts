/**
 * `POST /api/erasures`: subject erasure for administrators. The body names
 * the subject (`application_id` and one selector) and is a dry run unless
 * it says `"apply": true` with the `confirmation` a dry run returned. The
 * caller signs in as for the UI (a `TRACE_UI_AUTH_TOKEN` bearer, or a
 * session cookie with its CSRF token), never with the ingest token, and must
 * be an administrator whose scope covers the application.
 *
 * Auditing: `createApp` passes one hook (`ErasureAudit`), called twice per
 * request that passes the role and scope checks: with outcome `attempted`
 * before anything is counted or erased (a hook that fails refuses the
 * request: nothing is run unaudited), then with the real outcome
 * (`succeeded`, naming the receipt an apply wrote; `refused` or `failed`,
 * with a short code, naming a receipt only if one was written). A request
 * refused once its subject is read (role or scope, an apply without its
 * confirmation) is recorded once, as `refused`. Entries name the subject
 * only by its keyed digest, and the two entries of one request share its
 * `request_id`. A broken audit trail refuses the request with its own
 * answer (`audit_integrity`: the broken entry and `trace audit verify`).
 * A signed-in request refused before its subject is read (its CSRF token,
 * its role under the access middleware, its body, a server without the
 * key) names no subject yet: the access middleware records it in the audit
 * trail itself, as for every privileged action (`_audit_refusals.ts`).
 *
 * @module
 */

import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import type { TraceDb } from "../lib/db.ts";
import { TraceError } from "../lib/errors.ts";
import { describeIssues, objectIssueMessage } from "../lib/issues.ts";
import { AuditIntegrityError } from "../lib/auth/mod.ts";
import { newReceiptId, readReceipt } from "../lib/ledger/erasure_receipts.ts";
import {
  erasureKeyId,
  type ErasureSubject,
  MAX_SUBJECT_EVENT_IDS,
  nothingToApply,
  nothingToApplyAdvice,
  parseErasureSubject,
  SUBJECT_INPUT_KEYS,
  subjectDigest,
  tombstonedCounts,
} from "../lib/obs/maint/mod.ts";
import { LIMITS } from "../lib/obs/mod.ts";
import {
  type AppliedErasure,
  eraseSubject,
  planSubjectErasure,
  type SubjectErasurePlan,
} from "../lib/runs/mod.ts";
import { readSmallJson } from "./_body.ts";
import { methodNotAllowed } from "./_errors.ts";
import { HttpRefusal, noteAudited } from "./_audit_refusals.ts";
import { requireCsrf, requirePrincipal, type UiAuth } from "./_ui_auth.ts";
import type { Principal } from "./principal.ts";
import type { UiEnv } from "./ui/context.ts";

/**
 * Bytes one event id may take in a request: each of its UTF-16 units as a
 * `\uXXXX` escape (JSON writers that escape non-ASCII text, Python's
 * `json.dumps` among them, write six bytes a character), its quotes, and a
 * comma with a pretty-printer's line break and indent.
 */
const EVENT_ID_JSON_BYTES = LIMITS.idChars * 6 + 16;
/** Room for the rest of a request: application id, confirmation, keys, whitespace. */
const ERASURE_REQUEST_FRAME_BYTES = 64 * 1024;

/**
 * Largest erasure request, derived from the subject's limits: the most
 * event ids a subject may list, each of the longest length, written the
 * longest way (15,585,536 bytes, about 15 MiB). The access middleware
 * bounds it too.
 */
export const ERASURE_MAX_BODY_BYTES = MAX_SUBJECT_EVENT_IDS *
    EVENT_ID_JSON_BYTES + ERASURE_REQUEST_FRAME_BYTES;

/** Where the erasure API answers. */
export const ERASURES_PATH = "/api/erasures";

/** One audited erasure request: who, what (as a digest), how it stands, and its receipt. */
export interface ErasureAuditEntry {
  /** `attempted` before it runs; then `succeeded`, `refused` or `failed`. */
  outcome: "attempted" | "succeeded" | "refused" | "failed";
  /** Why it was refused or failed, as a short code (`role`, `scope`, `storage`, …) when it says more than the outcome; else `null`. */
  detail: string | null;
  /** Pairs the `attempted` entry of a request with its outcome. */
  request_id: string;
  /** A dry run, or an applied erasure. */
  action: "obs.erasure.plan" | "obs.erasure.apply";
  /** Who asked. */
  principal: Pick<Principal, "name" | "role" | "via">;
  /** The subject's tenant. */
  application_id: string;
  /** How the subject was selected. */
  selector: ErasureSubject["kind"];
  /** The subject under the erasure key; never the subject itself. */
  subject_digest: string;
  /** Which key made the digest. */
  key_id: string;
  /** The receipt an apply wrote, once it exists (`succeeded`, or a `failed` apply whose receipt was committed); else `null`. */
  receipt_id: string | null;
  /** When the request arrived, ISO 8601. */
  at: string;
}

/** The audit hook: must durably record the entry, or throw (an `attempted` entry that throws refuses the request). */
export type ErasureAudit = (entry: ErasureAuditEntry) => Promise<void>;

/** Dependencies of {@link createErasureApi}. */
export interface ErasureApiDeps {
  db: TraceDb;
  auth: UiAuth;
  /** The data directory's erasure key; without it the API answers 501. */
  key?: Uint8Array | undefined;
  /** Why the server has no key, when it knows (a lost key file): the 501 says it. */
  keyProblem?: string | undefined;
  /** Records each request before it runs and how it ended (the audit trail's hook point). */
  audit?: ErasureAudit | undefined;
}

const RequestEntries = {
  subject: v.unknown(),
  apply: v.optional(v.boolean("must be true or false")),
  confirmation: v.optional(v.string("must be a string")),
};

const RequestSchema = v.strictObject(
  RequestEntries,
  objectIssueMessage(`allowed keys: ${Object.keys(RequestEntries).join(", ")}`),
);

/** The `/api/erasures` sub-app (mounted by `createApp`, which lets it past the ingest bearer). */
export function createErasureApi(deps: ErasureApiDeps): Hono<UiEnv> {
  const app = new Hono<UiEnv>();
  app.post(
    ERASURES_PATH,
    requirePrincipal(deps.auth, "json"),
    requireCsrf(deps.auth),
    async (c) => {
      const key = deps.key;
      if (!key) {
        throw new HttpRefusal(
          501,
          deps.keyProblem === undefined
            ? "Erasure is not configured on this server: it needs the data directory's erasure key; start it with trace serve"
            : `Erasure is off on this server: ${deps.keyProblem}, then restart trace serve`,
          "erasure_key_missing",
          { code: "erasure_key_missing" },
        );
      }
      // Strict JSON: a field given twice could name one subject to whatever
      // logs the request and erase another. At most ERASURE_MAX_BODY_BYTES.
      const body = parseBody(
        await readSmallJson(
          c,
          "Send the erasure request as Content-Type: application/json",
          ERASURE_MAX_BODY_BYTES,
        ),
      );
      const subject = parseErasureSubject(body.subject);
      const principal = c.get("principal");
      const apply = body.apply === true;
      const receiptId = apply ? newReceiptId() : null;
      const requestId = crypto.randomUUID();
      const at = new Date().toISOString();
      const entry = (
        outcome: ErasureAuditEntry["outcome"],
        detail: string | null = null,
        receipt: string | null = null,
      ): ErasureAuditEntry => ({
        outcome,
        detail,
        request_id: requestId,
        action: apply ? "obs.erasure.apply" : "obs.erasure.plan",
        principal: {
          name: principal.name,
          role: principal.role,
          via: principal.via,
        },
        application_id: subject.application_id,
        selector: subject.kind,
        subject_digest: subjectDigest(subject, key),
        key_id: erasureKeyId(key),
        receipt_id: receipt,
        at,
      });
      // From here on every request reaches the audit hook, with its subject's digest.
      noteAudited(c);
      const refusal = adminRefusal(principal, subject);
      if (refusal) {
        await tryAudit(deps.audit, entry("refused", refusal.detail));
        throw new HTTPException(403, { message: refusal.message });
      }
      if (apply && body.confirmation === undefined) {
        await tryAudit(deps.audit, entry("refused", "confirmation_missing"));
        throw new HTTPException(400, {
          message:
            "confirmation is required with apply: true; send a dry run first and pass back its confirmation",
        });
      }
      const { answer, unrecorded } = await auditedRun(
        deps.audit,
        entry,
        async () =>
          apply
            ? await eraseSubject(deps.db, subject, body.confirmation!, {
              key,
              receiptId: receiptId!,
            })
            : await planSubjectErasure(deps.db, subject, { key }),
        // A receipt is named once it exists: after an apply that succeeded,
        // or one that failed after its transaction committed.
        async (succeeded) =>
          receiptId !== null && (succeeded || await written(deps.db, receiptId))
            ? receiptId
            : null,
      );
      if (unrecorded === null) return c.json(withNextStep(answer, subject));
      // A dry run changed nothing: without its outcome recorded it answers nothing.
      if (!apply) {
        if (unrecorded instanceof AuditIntegrityError) throw unrecorded;
        throw new HTTPException(503, { message: DRY_RUN_UNRECORDED });
      }
      // An applied erasure cannot be undone: answer it, and say what the trail lacks.
      return c.json({
        ...answer,
        audit_warning: outcomeUnrecorded(unrecorded, requestId),
      });
    },
  );
  app.all(ERASURES_PATH, (c) => methodNotAllowed(c, ["POST"]));
  return app;
}

/**
 * A dry run's answer with what to do next: the request that applies it, or,
 * for event ids that matched nothing (an apply the server would refuse),
 * what to check instead (the receipt that erased them already, when there
 * is one); an apply's answer as it is.
 */
function withNextStep(
  answer: SubjectErasurePlan | AppliedErasure,
  subject: ErasureSubject,
): object {
  if (!("confirmation" in answer)) return answer;
  return {
    ...answer,
    next: nothingToApply(subject, answer.events)
      ? nothingToApplyAdvice(answer.earlier_receipt_id, {
        tombstoned: tombstonedCounts(subject, answer.erased_event_ids),
      })
      : `to erase what this dry run counted, send the same subject again with "apply": true and "confirmation": ${
        JSON.stringify(answer.confirmation)
      }`,
  };
}

function parseBody(input: unknown): v.InferOutput<typeof RequestSchema> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new HTTPException(400, {
      message:
        'The body must be a JSON object: {"subject": {...}, "apply": false}',
    });
  }
  const misplaced = misplacedSubjectKeys(input);
  if (misplaced.length > 0) {
    throw new HTTPException(400, {
      message: `Invalid erasure request: put ${
        misplaced.join(", ")
      } inside subject: {"subject": {${
        misplaced.map((key) => `"${key}": …`).join(", ")
      }}}`,
    });
  }
  const parsed = v.safeParse(RequestSchema, input);
  if (!parsed.success) {
    throw new HTTPException(400, {
      message: `Invalid erasure request: ${describeIssues(parsed.issues)}`,
    });
  }
  return parsed.output;
}

/**
 * The subject's keys a body without `subject` gives at its top level, when
 * every key it has belongs either there or to the request itself (a subject
 * written flat); else none, and the schema names what is wrong.
 */
function misplacedSubjectKeys(body: object): string[] {
  if ("subject" in body) return [];
  const keys = Object.keys(body);
  const misplaced = keys.filter((key) => SUBJECT_INPUT_KEYS.includes(key));
  const rest = keys.filter((key) => !SUBJECT_INPUT_KEYS.includes(key));
  const requestKeys = Object.keys(RequestEntries);
  return rest.every((key) => requestKeys.includes(key)) ? misplaced : [];
}

/** Why the principal may not erase this subject (role, or an application outside its scope), or `null`. */
function adminRefusal(
  principal: Principal,
  subject: ErasureSubject,
): { detail: string; message: string } | null {
  if (principal.role !== "admin") {
    return {
      detail: "role",
      message:
        `Erasure needs the admin role; operator ${principal.name} is ${principal.role}`,
    };
  }
  const scoped = principal.scope.application_id;
  if (scoped !== undefined && scoped !== subject.application_id) {
    return {
      detail: "scope",
      message:
        `Operator ${principal.name} may not erase outside the application of its scope; leave the application as ${scoped}`,
    };
  }
  return null;
}

/**
 * Runs the erasure between its two audit entries: `attempted` first (a
 * failure refuses the request before it runs), then how it ended, naming
 * the receipt `receipt` finds. Returns the answer and, when its outcome
 * could not be recorded, why (else `null`).
 */
async function auditedRun(
  audit: ErasureAudit | undefined,
  entry: (
    outcome: ErasureAuditEntry["outcome"],
    detail?: string | null,
    receipt?: string | null,
  ) => ErasureAuditEntry,
  run: () => Promise<SubjectErasurePlan | AppliedErasure>,
  receipt: (succeeded: boolean) => Promise<string | null>,
): Promise<
  { answer: SubjectErasurePlan | AppliedErasure; unrecorded: unknown }
> {
  await auditOrRefuse(audit, entry("attempted"));
  let answer: SubjectErasurePlan | AppliedErasure;
  try {
    answer = await run();
  } catch (error) {
    const outcome = endedAs(error);
    await tryAudit(
      audit,
      entry(outcome, failureCode(error, outcome), await receipt(false)),
    );
    throw error;
  }
  const done = entry("succeeded", null, await receipt(true));
  return { answer, unrecorded: await tryAudit(audit, done) };
}

/** Whether the receipt `id` is in the ledger (an apply can fail after its transaction committed). */
async function written(db: TraceDb, id: string): Promise<boolean> {
  try {
    await readReceipt(db, id);
    return true;
  } catch {
    return false;
  }
}

const DRY_RUN_UNRECORDED =
  "The audit trail could not record the dry run's outcome, so its answer is withheld; retry once the audit trail is writable";

/** The warning an applied erasure carries when its outcome is not in the trail. */
function outcomeUnrecorded(why: unknown, requestId: string): string {
  const trail = why instanceof AuditIntegrityError
    ? `the audit trail is broken at entry seq ${why.seq} (run trace audit verify)`
    : "the audit trail could not be written";
  return `The erasure was applied and its receipt is in the ledger, but its outcome is not in the audit trail: ${trail}; the trail holds the attempt, request ${requestId}`;
}

/** Records the attempt; when that fails the request is refused before it runs. */
async function auditOrRefuse(
  audit: ErasureAudit | undefined,
  entry: ErasureAuditEntry,
): Promise<void> {
  if (!audit) return;
  try {
    await audit(entry);
  } catch (error) {
    // A broken trail says where, and what to run; its message names no data.
    if (error instanceof AuditIntegrityError) throw error;
    throw new HTTPException(503, {
      message:
        "The audit trail refused the entry, so the erasure request was not run; retry once the audit trail is writable",
      cause: error,
    });
  }
}

/** Records an outcome; `null` once written (no hook: nothing to write), else why not. */
async function tryAudit(
  audit: ErasureAudit | undefined,
  entry: ErasureAuditEntry,
): Promise<unknown> {
  if (!audit) return null;
  try {
    await audit(entry);
    return null;
  } catch (error) {
    return error ?? new Error("the audit hook failed");
  }
}

/** A rule that said no (a changed subject, a stale confirmation) is `refused`; anything else `failed`. */
function endedAs(error: unknown): "refused" | "failed" {
  const refusals = [
    "refused",
    "forbidden",
    "conflict",
    "config_invalid",
    "erasure_unmatched",
  ];
  return error instanceof TraceError && refusals.includes(error.code)
    ? "refused"
    : "failed";
}

/**
 * A short, content-free code of why the erasure did not run or finish;
 * `null` when it would only repeat the outcome (`refused` for `refused`).
 */
function failureCode(error: unknown, outcome: string): string | null {
  const code = error instanceof TraceError
    ? error.code
    : error instanceof HTTPException
    ? `http_${error.status}`
    : "internal";
  return code === outcome ? null : code;
}

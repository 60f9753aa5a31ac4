/**
 * `POST /api/erasures`: subject erasure for administrators. The body names
 * the subject (`application_id` and one selector) and is a dry run unless
 * it says `"apply": true` with the `confirmation` a dry run returned. The
 * caller signs in as for the UI (a `TRACE_UI_AUTH_TOKEN` bearer, or a
 * session cookie with its CSRF token), never with the ingest token, and must
 * be an administrator whose scope covers the application.
 *
 * Auditing: `createApp` passes one hook (`ErasureAudit`); when present it is
 * called before anything is counted or erased, and a hook that fails refuses
 * the request (a privileged action is never left unaudited). The entry names
 * the subject only by its keyed digest.
 *
 * @module
 */

import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import type { TraceDb } from "../lib/db.ts";
import { describeIssues, objectIssueMessage } from "../lib/issues.ts";
import { newReceiptId } from "../lib/ledger/erasure_receipts.ts";
import {
  erasureKeyId,
  type ErasureSubject,
  parseErasureSubject,
  subjectDigest,
} from "../lib/obs/maint/mod.ts";
import { eraseSubject, planSubjectErasure } from "../lib/runs/mod.ts";
import { mediaType, readRequestBody, refuseUnread, utf8Text } from "./_body.ts";
import { methodNotAllowed } from "./_errors.ts";
import { requireCsrf, requirePrincipal, type UiAuth } from "./_ui_auth.ts";
import type { Principal } from "./principal.ts";
import type { UiEnv } from "./ui/context.ts";

const MAX_BODY_BYTES = 1024 * 1024;

/** Where the erasure API answers. */
export const ERASURES_PATH = "/api/erasures";

/** One audited erasure request: who, what (as a digest), and the receipt it will get. */
export interface ErasureAuditEntry {
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
  /** The id the receipt will have (apply only). */
  receipt_id: string | null;
  /** When the request arrived, ISO 8601. */
  at: string;
}

/** The audit hook: must durably record the entry, or throw to refuse the request. */
export type ErasureAudit = (entry: ErasureAuditEntry) => Promise<void>;

/** Dependencies of {@link createErasureApi}. */
export interface ErasureApiDeps {
  db: TraceDb;
  auth: UiAuth;
  /** The data directory's erasure key; without it the API answers 501. */
  key?: Uint8Array | undefined;
  /** Records each request before it runs (the audit trail's hook point). */
  audit?: ErasureAudit | undefined;
}

const RequestSchema = v.strictObject({
  subject: v.unknown(),
  apply: v.optional(v.boolean("must be true or false")),
  confirmation: v.optional(v.string("must be a string")),
}, objectIssueMessage("allowed keys: subject, apply, confirmation"));

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
        throw new HTTPException(501, {
          message:
            "Erasure is not configured on this server: it needs the data directory's erasure key; start it with trace serve",
        });
      }
      const body = parseBody(await readJson(c.req.raw));
      const subject = parseErasureSubject(body.subject);
      const principal = c.get("principal");
      requireAdminFor(principal, subject);
      const apply = body.apply === true;
      if (apply && body.confirmation === undefined) {
        throw new HTTPException(400, {
          message:
            "confirmation is required with apply: true; send a dry run first and pass back its confirmation",
        });
      }
      const receiptId = apply ? newReceiptId() : null;
      await auditOrRefuse(deps.audit, {
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
        receipt_id: receiptId,
        at: new Date().toISOString(),
      });
      if (!apply) {
        return c.json(await planSubjectErasure(deps.db, subject, { key }));
      }
      const applied = await eraseSubject(deps.db, subject, body.confirmation!, {
        key,
        receiptId: receiptId!,
      });
      return c.json(applied);
    },
  );
  app.all(ERASURES_PATH, (c) => methodNotAllowed(c, ["POST"]));
  return app;
}

function parseBody(input: unknown): v.InferOutput<typeof RequestSchema> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new HTTPException(400, {
      message:
        'The body must be a JSON object: {"subject": {...}, "apply": false}',
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

/** The erasure request as JSON: at most 1 MiB (10,000 event ids fit easily). */
async function readJson(request: Request): Promise<unknown> {
  if (mediaType(request) !== "application/json") {
    return await refuseUnread(
      request,
      415,
      "Send the erasure request as Content-Type: application/json",
    );
  }
  const bytes = await readRequestBody(request, {
    maxBytes: MAX_BODY_BYTES,
    maxDecodedBytes: MAX_BODY_BYTES,
  });
  try {
    return JSON.parse(utf8Text(bytes));
  } catch (error) {
    if (error instanceof HTTPException) throw error;
    throw new HTTPException(400, { message: "The body is not valid JSON" });
  }
}

/** Only an administrator, and only for an application inside the principal's scope. */
function requireAdminFor(principal: Principal, subject: ErasureSubject): void {
  if (principal.role !== "admin") {
    throw new HTTPException(403, {
      message:
        `Erasure needs the admin role; operator ${principal.name} is ${principal.role}`,
    });
  }
  const scoped = principal.scope.application_id;
  if (scoped !== undefined && scoped !== subject.application_id) {
    throw new HTTPException(403, {
      message:
        `Operator ${principal.name} may not erase in application ${subject.application_id}: it is outside the operator's scope`,
    });
  }
}

async function auditOrRefuse(
  audit: ErasureAudit | undefined,
  entry: ErasureAuditEntry,
): Promise<void> {
  if (!audit) return;
  try {
    await audit(entry);
  } catch (error) {
    throw new HTTPException(503, {
      message:
        "The audit trail refused the entry, so the erasure request was not run; retry once the audit trail is writable",
      cause: error,
    });
  }
}

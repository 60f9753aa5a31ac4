/**
 * The reviewed plan of a source expiry, its first step: the exact envelopes
 * received before a cutoff, each with its fingerprint, sealed with a plan
 * fingerprint and a confirmation string the operator passes back. A plan
 * read from outside is checked against its seal and its own cutoff and
 * tenant before anything uses it.
 *
 * @module
 */

import * as v from "valibot";
import type { TraceDb } from "../../db.ts";
import { ConfigError, RefusedError } from "../../errors.ts";
import { describeIssues } from "../../issues.ts";
import { canonicalJson, sha256Hex } from "../../canonical_json.ts";
import { OpaqueIdSchema, TimestampSchema } from "../model.ts";
import { requireObs } from "../schema.ts";
import { quoteValue } from "../../echo.ts";

/** Version of the plan format. */
export const EXPIRY_PLAN_VERSION = 1;
/** Envelopes per plan when no limit is given. */
export const DEFAULT_EXPIRY_LIMIT = 1_000;
/** Largest plan. */
export const MAX_EXPIRY_LIMIT = 10_000;

const Fingerprint = v.pipe(
  v.string(),
  v.regex(/^[0-9a-f]{64}$/, "must be a SHA-256 hex digest"),
);

const PlanEntrySchema = v.strictObject({
  seq: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  application_id: OpaqueIdSchema,
  event_id: OpaqueIdSchema,
  store: v.string(),
  source: v.string(),
  received_at: TimestampSchema,
  fingerprint: Fingerprint,
});

/** One envelope of a plan (identity and fingerprint only, no body). */
export interface ExpiryPlanEntry {
  /** The envelope's key. */
  seq: number;
  /** Its tenant. */
  application_id: string;
  /** The writer's id of its event. */
  event_id: string;
  /** The store the event is filed in. */
  store: string;
  /** The ingest path it came by. */
  source: string;
  /** When it was received, ISO 8601. */
  received_at: string;
  /** SHA-256 of the envelope as planned: a changed envelope is not deleted. */
  fingerprint: string;
}

/** A reviewed expiry plan: which source envelopes may go, sealed by a fingerprint. */
export interface ExpiryPlan {
  /** Plan format version ({@link EXPIRY_PLAN_VERSION}). */
  version: typeof EXPIRY_PLAN_VERSION;
  /** When it was made, ISO 8601. */
  created_at: string;
  /** Envelopes received before this instant were eligible. */
  older_than: string;
  /** The tenant it is limited to, or `null` for all. */
  application_id: string | null;
  /** The envelopes to delete. */
  entries: ExpiryPlanEntry[];
  /** More envelopes matched than the plan lists; plan again after applying. */
  more: boolean;
  /** SHA-256 of the plan without this field and `confirmation`. */
  fingerprint: string;
  /** The string an operator passes back to apply exactly this plan. */
  confirmation: string;
}

const PlanShape = v.strictObject({
  version: v.literal(EXPIRY_PLAN_VERSION, `must be ${EXPIRY_PLAN_VERSION}`),
  created_at: TimestampSchema,
  older_than: TimestampSchema,
  application_id: v.nullable(OpaqueIdSchema),
  entries: v.pipe(v.array(PlanEntrySchema), v.maxLength(MAX_EXPIRY_LIMIT)),
  /** More envelopes matched than the plan lists; plan again after applying. */
  more: v.boolean(),
  fingerprint: Fingerprint,
  confirmation: v.string(),
});

/** Schema of a reviewed expiry plan (as read back from a file). */
export const ExpiryPlanSchema: v.GenericSchema<unknown, ExpiryPlan> = PlanShape;

// The interface restates what the schema returns, for readers of the docs;
// this line stops compiling when the two drift apart.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;
type Holds<T extends true> = T;
type _ExpiryPlanMatches = Holds<
  Same<ExpiryPlan, v.InferOutput<typeof PlanShape>>
>;

/** Options for {@link planExpiry}. */
export interface PlanExpiryOptions {
  /** Envelopes received before this instant are eligible (ISO 8601 with a zone, or epoch ms). */
  olderThan: string | number | Date;
  /** Most envelopes listed (default 1,000, at most 10,000). */
  limit?: number;
  /** Only this tenant. */
  applicationId?: string;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
}

function instant(value: string | number | Date): number {
  // Date.parse reads "0" as 2000 and February 30 as March 2: a cutoff that
  // decides what is deleted must be the time it reads as, zone included.
  const text = typeof value === "string"
    ? v.safeParse(TimestampSchema, value)
    : null;
  const ms = value instanceof Date
    ? value.getTime()
    : typeof value === "number"
    ? value
    : text?.success
    ? Date.parse(value)
    : NaN;
  if (!Number.isFinite(ms)) {
    // A well-formed time naming no real date says so; anything else gets the form.
    const unreal = text && !text.success && text.issues[0].type === "check";
    throw new ConfigError(
      `Invalid expiry cutoff ${quoteValue(String(value))}: ${
        unreal ? `${text.issues[0].message}; ` : ""
      }use an ISO 8601 timestamp with a zone such as 2026-08-01T00:00:00Z`,
    );
  }
  return ms;
}

function sealPlan(
  unsealed: Omit<ExpiryPlan, "fingerprint" | "confirmation">,
): string {
  return sha256Hex(canonicalJson(unsealed));
}

/** The string an operator must pass back to apply `plan`. */
export function confirmationFor(entries: number, fingerprint: string): string {
  return `expire ${entries} envelopes ${fingerprint.slice(0, 16)}`;
}

/** Lists the envelopes received before `olderThan`, sealed for review. */
export async function planExpiry(
  db: TraceDb,
  options: PlanExpiryOptions,
): Promise<ExpiryPlan> {
  const before = instant(options.olderThan);
  const now = (options.now ?? Date.now)();
  if (before > now) {
    throw new ConfigError(
      "Invalid expiry cutoff: it lies in the future; choose a past instant",
    );
  }
  const limit = options.limit ?? DEFAULT_EXPIRY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_EXPIRY_LIMIT) {
    throw new ConfigError(
      `Invalid expiry limit ${limit}: use a whole number from 1 to ${MAX_EXPIRY_LIMIT}`,
    );
  }
  await requireObs(db);
  const tenant = options.applicationId;
  const result = await db.client.execute({
    sql:
      `SELECT seq, application_id, event_id, store, source, fingerprint, received_at
          FROM obs_envelopes WHERE received_at < ?${
        tenant === undefined ? "" : " AND application_id = ?"
      }
          ORDER BY seq LIMIT ?`,
    args: tenant === undefined
      ? [before, limit + 1]
      : [before, tenant, limit + 1],
  });
  const entries = result.rows.slice(0, limit).map((row) => ({
    seq: Number(row.seq),
    application_id: String(row.application_id),
    event_id: String(row.event_id),
    store: String(row.store),
    source: String(row.source),
    received_at: new Date(Number(row.received_at)).toISOString(),
    fingerprint: String(row.fingerprint),
  }));
  const unsealed = {
    version: EXPIRY_PLAN_VERSION,
    created_at: new Date(now).toISOString(),
    older_than: new Date(before).toISOString(),
    application_id: tenant ?? null,
    entries,
    more: result.rows.length > limit,
  } as const;
  const fingerprint = sealPlan(unsealed);
  return {
    ...unsealed,
    fingerprint,
    confirmation: confirmationFor(entries.length, fingerprint),
  };
}

/** Validates a plan read from outside and checks its seal. */
export function parseExpiryPlan(input: unknown): ExpiryPlan {
  const parsed = v.safeParse(ExpiryPlanSchema, input);
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid expiry plan: ${
        describeIssues(parsed.issues)
      }; create a new one with trace obs expiry-plan`,
    );
  }
  const { fingerprint, confirmation, ...unsealed } = parsed.output;
  const seal = sealPlan(unsealed);
  if (
    seal !== fingerprint ||
    confirmation !== confirmationFor(unsealed.entries.length, seal)
  ) {
    throw new RefusedError(
      "Cannot apply the expiry plan: it was altered after review (its fingerprint does not match); create and review a new plan",
    );
  }
  checkPlanScope(parsed.output);
  return parsed.output;
}

/**
 * The seal is an unkeyed digest, so anyone can reseal a hand-made plan: every
 * entry must still fall inside the plan's own cutoff and tenant, and appear
 * once. Refuses the whole plan, naming the first bad entry.
 */
function checkPlanScope(plan: ExpiryPlan): void {
  const cutoff = Date.parse(plan.older_than);
  const seen = new Set<number>();
  for (const entry of plan.entries) {
    const problem = seen.has(entry.seq)
      ? "is listed more than once"
      : !(Date.parse(entry.received_at) < cutoff)
      ? `was received at ${entry.received_at}, not before the plan's cutoff ${plan.older_than}`
      : plan.application_id !== null &&
          entry.application_id !== plan.application_id
      ? `belongs to another tenant than the plan's application_id "${plan.application_id}"`
      : null;
    if (problem) {
      throw new RefusedError(
        `Cannot apply the expiry plan: entry seq ${entry.seq} ${problem}; create and review a new plan with trace obs expiry-plan`,
      );
    }
    seen.add(entry.seq);
  }
}

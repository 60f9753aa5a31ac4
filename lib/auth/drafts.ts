/**
 * Replay drafts: reviewable records of an inert replay plan. Creating one
 * stores the record and its audit entry in one transaction and runs
 * nothing: no model, tool, queue or application action. A draft keeps only
 * content-free, non-identifying references (user and resource ids as keyed
 * digests), so erasing a subject never needs to edit a draft.
 *
 * @module
 */

import { canonicalJson } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { LedgerIntegrityError } from "../errors.ts";
import { payloadDigest } from "../ledger/chain.ts";
import {
  appendAudit,
  type AuditActor,
  type AuditEntry,
  type AuditRecord,
} from "./audit.ts";
import type { ReplayPlan } from "./replay.ts";
import type { TenantScope } from "./roles.ts";
import {
  requireSubjectKey,
  subjectDigest,
  subjectKeyFor,
} from "./subject_digest.ts";

/** A stored replay draft. */
export interface ReplayDraft {
  /** The draft's id. */
  draft_id: string;
  /** A reviewable record; nothing runs it. */
  kind: "observability_experiment";
  /** Always `draft`. */
  status: "draft";
  /** When it was created, ISO 8601. */
  created_at: string;
  /** The operator who created it. */
  created_by: string;
  /** The reason the operator gave. */
  reason: string | null;
  /** Always false: a draft is inert. */
  execution_enabled: false;
  /** Always disabled. */
  network: "disabled";
  /** Always disabled. */
  side_effects: "disabled";
  /** What running it would take. */
  requires: ReplayPlan["requires"];
  /** The one task scope it was drawn from. */
  selection: {
    application_id: string;
    /** Keyed digest, or `null` for anonymous evidence. */
    user_id: string | null;
    agent_id: string;
    root_trace_id: string;
    turn_id: string | null;
    run_id: string | null;
  };
  /** Events of the selection. */
  events: number;
  /** Frozen refs; `id` is a keyed digest of the host's id. */
  refs: { type: string; id: string; version: string | null; roles: string[] }[];
  /** Refs without a version. */
  unversioned_refs: number;
  /** SHA-256 over the content-free projection of every selected event. */
  evidence_fingerprint: string;
  /** The replay plan format. */
  plan_version: 1;
}

/** What creating a draft stored. */
export interface CreatedDraft {
  /** The stored draft. */
  draft: ReplayDraft;
  /** The audit entry recording its creation. */
  audit: AuditEntry;
}

/**
 * Stores `plan` as a draft with its audit entry (`record` without targets:
 * the draft's ids are added here), both or neither.
 */
export async function createDraft(
  db: TraceDb,
  plan: ReplayPlan,
  options: {
    actor: AuditActor;
    reason: string | null;
    audit: Omit<AuditRecord, "outcome" | "targets" | "reason" | "actor">;
  },
): Promise<CreatedDraft> {
  const draftId = `replay-${crypto.randomUUID()}`;
  let draft: ReplayDraft | undefined;
  const record: AuditRecord = {
    ...options.audit,
    actor: options.actor,
    reason: options.reason,
    outcome: "succeeded",
    targets: {
      draft_id: draftId,
      application_id: plan.selection.application_id,
      user_id: plan.selection.user_id,
      agent_id: plan.selection.agent_id,
      root_trace_id: plan.selection.root_trace_id,
      ...(plan.selection.turn_id ? { turn_id: plan.selection.turn_id } : {}),
      ...(plan.selection.run_id ? { run_id: plan.selection.run_id } : {}),
      events: plan.events,
      refs: plan.refs.length,
    },
  };
  const audit = await appendAudit(db, record, async (tx) => {
    const key = await subjectKeyFor(tx);
    draft = draftOf(plan, draftId, options, key);
    const text = canonicalJson(draft);
    await tx.execute({
      sql: `INSERT INTO auth_replay_drafts
        (draft_id, created_at, operator, application_id, payload, payload_digest)
        VALUES (?, ?, ?, ?, ?, ?)`,
      args: [
        draftId,
        draft.created_at,
        options.actor.name,
        plan.selection.application_id,
        text,
        payloadDigest(text),
      ],
    });
  });
  return { draft: draft!, audit };
}

function draftOf(
  plan: ReplayPlan,
  draftId: string,
  options: { actor: AuditActor; reason: string | null },
  key: string,
): ReplayDraft {
  const user = plan.selection.user_id;
  return {
    draft_id: draftId,
    kind: "observability_experiment",
    status: "draft",
    created_at: new Date().toISOString(),
    created_by: options.actor.name,
    reason: options.reason,
    execution_enabled: false,
    network: "disabled",
    side_effects: "disabled",
    requires: plan.requires,
    selection: {
      ...plan.selection,
      user_id: user === null ? null : subjectDigest(key, "user_id", user),
    },
    events: plan.events,
    refs: plan.refs.map((ref) => ({
      type: ref.type,
      id: subjectDigest(key, "resource_id", ref.id),
      version: ref.version ?? null,
      roles: ref.roles,
    })),
    unversioned_refs: plan.unversioned_refs,
    evidence_fingerprint: plan.evidence_fingerprint,
    plan_version: 1,
  };
}

/** The newest drafts inside `scope`, each checked against its digest. */
export async function listDrafts(
  db: TraceDb,
  scope: TenantScope,
  options: { limit?: number } = {},
): Promise<ReplayDraft[]> {
  const limit = options.limit ?? 50;
  const bound = "application_id" in scope;
  const result = await db.client.execute({
    sql: `SELECT * FROM auth_replay_drafts ${
      bound ? "WHERE application_id = ?" : ""
    } ORDER BY created_at DESC, draft_id LIMIT ?`,
    args: bound ? [scope.application_id!, limit] : [limit],
  });
  const drafts = result.rows.map((row) => checkedDraft(row));
  if (!("user_id" in scope)) return drafts;
  if (scope.user_id === null || scope.user_id === undefined) {
    return drafts.filter((draft) => draft.selection.user_id === null);
  }
  const key = await requireSubjectKey(db);
  if (key === null) return [];
  const digest = subjectDigest(key, "user_id", scope.user_id);
  return drafts.filter((draft) => draft.selection.user_id === digest);
}

function checkedDraft(row: Record<string, unknown>): ReplayDraft {
  const text = String(row.payload);
  if (payloadDigest(text) !== String(row.payload_digest)) {
    throw new LedgerIntegrityError(
      `The replay draft ${
        String(row.draft_id)
      } was changed after it was written`,
    );
  }
  return JSON.parse(text) as ReplayDraft;
}

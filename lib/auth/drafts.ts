/**
 * Replay drafts: reviewable records of an inert replay plan. Creating one
 * stores the record and its audit entry in one transaction and runs
 * nothing: no model, tool, queue or application action. A draft keeps no
 * content, and user and resource ids only as keyed digests; but it names
 * the trace it was drawn from (agent, root, turn and run ids) and keeps the
 * operator's reason. So an erasure of the events a draft was drawn from
 * removes the draft too ({@link draftsReached}, {@link deleteDrafts}): with
 * its evidence gone, it could not be replayed or reviewed anyway.
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
import { type ReplayPlan, selectionMatches } from "./replay.ts";
import type { TenantScope } from "./roles.ts";
import {
  readSubjectKey,
  requireSubjectKey,
  type SqlRunner,
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

/**
 * The newest drafts inside `scope`, each checked against its digest. The
 * scope is applied in the query, before the limit, so a user's drafts are
 * found behind any number of newer drafts of other users.
 */
export async function listDrafts(
  db: TraceDb,
  scope: TenantScope,
  options: { limit?: number } = {},
): Promise<ReplayDraft[]> {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if ("application_id" in scope) {
    where.push("application_id = ?");
    args.push(scope.application_id!);
  }
  if ("user_id" in scope) {
    const user = "json_extract(payload, '$.selection.user_id')";
    if (scope.user_id === null || scope.user_id === undefined) {
      where.push(`${user} IS NULL`);
    } else {
      const key = await requireSubjectKey(db);
      if (key === null) return [];
      where.push(`${user} = ?`);
      args.push(subjectDigest(key, "user_id", scope.user_id));
    }
  }
  const result = await db.client.execute({
    sql: `SELECT * FROM auth_replay_drafts ${
      where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""
    } ORDER BY created_at DESC, draft_id LIMIT ?`,
    args: [...args, options.limit ?? 50],
  });
  return result.rows.map((row) => checkedDraft(row));
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

/** The trace keys of one event an erasure removes. */
export interface ErasedTraceKeys {
  agent_id: string | null;
  root_trace_id: string | null;
  turn_id: string | null;
  run_id: string | null;
}

/** What an erasure removes, as drafts are matched against it. */
export interface DraftErasure {
  /** The tenant: drafts of other applications are never reached. */
  application_id: string;
  /** The events it removes: a draft drawn from any of them is reached. */
  events: readonly ErasedTraceKeys[];
  /**
   * The user it removes (`null`: the anonymous users), when it removes one:
   * a draft naming that user is reached even when its events went earlier
   * (retention), or are gone already (verification after the erasure).
   */
  user?: string | null;
  /**
   * Events of the subject it leaves in place (written after the bound its
   * dry run reviewed): a draft drawn only from them is not reached by
   * naming the user.
   */
  kept?: readonly ErasedTraceKeys[];
}

/**
 * Ids of the drafts an erasure reaches: those of its application drawn from
 * one of its events (by the rule a plan selects with), or naming its user.
 * None when the database holds no drafts table (never served).
 */
export async function draftsReached(
  executor: SqlRunner,
  erasure: DraftErasure,
): Promise<string[]> {
  if (!(await hasDraftsTable(executor))) return [];
  const result = await executor.execute({
    sql:
      "SELECT draft_id, payload FROM auth_replay_drafts WHERE application_id = ?",
    args: [erasure.application_id],
  });
  if (result.rows.length === 0) return [];
  const user = await userDigest(executor, erasure.user);
  const traces = byTrace(erasure.events);
  const kept = byTrace(erasure.kept ?? []);
  const reached: string[] = [];
  for (const row of result.rows) {
    const selection = draftSelection(row.payload);
    // A payload that is not a draft is not read: listDrafts refuses it.
    if (selection === null) continue;
    const named = user !== undefined && selection.user_id === user &&
      !drawnFrom(selection, kept);
    if (named || drawnFrom(selection, traces)) {
      reached.push(String(row.draft_id));
    }
  }
  return reached;
}

/** The key of an agent's trace: a draft is drawn from one. */
function traceKey(agentId: string | null, rootTraceId: string | null): string {
  return JSON.stringify([agentId, rootTraceId]);
}

/** `events` by their agent's trace, so each draft looks at its own only (an erasure may hold many). */
function byTrace(
  events: readonly ErasedTraceKeys[],
): Map<string, ErasedTraceKeys[]> {
  const traces = new Map<string, ErasedTraceKeys[]>();
  for (const event of events) {
    const key = traceKey(event.agent_id, event.root_trace_id);
    const list = traces.get(key);
    if (list) list.push(event);
    else traces.set(key, [event]);
  }
  return traces;
}

/** Removes the drafts `ids` (inside the erasure's transaction); returns how many went. */
export async function deleteDrafts(
  executor: SqlRunner,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await executor.execute({
    sql:
      "DELETE FROM auth_replay_drafts WHERE draft_id IN (SELECT value FROM json_each(?))",
    args: [JSON.stringify(ids)],
  });
  return result.rowsAffected;
}

async function hasDraftsTable(executor: SqlRunner): Promise<boolean> {
  const table = await executor.execute(
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'auth_replay_drafts'",
  );
  return table.rows.length > 0;
}

/**
 * How drafts name `user`: its keyed digest, `null` for the anonymous users,
 * `undefined` when no user is erased (or no key was ever made, so no draft
 * names one).
 */
async function userDigest(
  executor: SqlRunner,
  user: string | null | undefined,
): Promise<string | null | undefined> {
  if (user === undefined) return undefined;
  if (user === null) return null;
  const key = await readSubjectKey(executor);
  return key === null ? undefined : subjectDigest(key, "user_id", user);
}

function draftSelection(payload: unknown): ReplayDraft["selection"] | null {
  try {
    const draft = JSON.parse(String(payload)) as Partial<ReplayDraft>;
    const selection = draft.selection;
    return typeof selection?.agent_id === "string" &&
        typeof selection.root_trace_id === "string"
      ? selection
      : null;
  } catch {
    return null;
  }
}

function drawnFrom(
  selection: ReplayDraft["selection"],
  traces: ReadonlyMap<string, readonly ErasedTraceKeys[]>,
): boolean {
  const events = traces.get(
    traceKey(selection.agent_id, selection.root_trace_id),
  ) ?? [];
  return events.some((event) =>
    selectionMatches({
      agent_id: event.agent_id,
      root_trace_id: event.root_trace_id ?? "",
      application_id: selection.application_id,
      turn_id: event.turn_id,
      run_id: event.run_id,
      user_id: null,
    }, {
      agent_id: selection.agent_id,
      root_trace_id: selection.root_trace_id,
      turn_id: selection.turn_id,
      run_id: selection.run_id,
    })
  );
}

/**
 * Refs served after their deletion: an event deletes a resource (a ref with
 * role `deleted`, or any ref of a `memory_delete` event), and a later event
 * supplies it to a model or binds it to an output anyway. For each such ref
 * the evidence names the deleting event, the first and last later use and
 * what served it there: the refs that use supplied (a selected candidate or
 * a `supplied` resource), e.g. the answer-cache entry behind a stale answer.
 *
 * Events across roots count: a deletion and the answer that ignored it are
 * usually separate tasks of one thread. Only explicit refs are evidence;
 * a ref merely retrieved (and rejected) after its deletion is not a use.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import type { ResourceRef, TraceEvent } from "../model.ts";
import { requireObs } from "../schema.ts";
import { tenantWhere } from "./_find_sql.ts";
import { readEventPage } from "./_read_rows.ts";
import type { TraceFilter } from "./filters.ts";
import type { ReadCompleteness } from "./query.ts";

/** Most deleted refs listed. */
export const MAX_DELETION_USES = 20;
/** Most events (the newest with refs or a selection) read of a thread. */
export const THREAD_EVIDENCE_EVENTS = 1_000;

/** Where an event sits, enough to link to it. */
export interface EventPointer {
  event_id: string;
  application_id: string;
  root_trace_id: string;
  agent_id: string | null;
  memory_id: string | null;
  thread_id: string | null;
  kind: string;
  ts: string;
}

/** A ref a using event supplied. */
export interface ServedRef {
  type: string;
  id: string;
  version: string | null;
}

/** A use of a deleted ref. */
export interface RefUse extends EventPointer {
  /** How the event used the ref. */
  lanes: ("supplied" | "output_bound")[];
  /** What the event supplied (selected candidates and `supplied` refs). */
  served_by: ServedRef[];
}

/** A ref used after an event deleted it. */
export interface DeletionUse {
  ref: { type: string; id: string };
  deleted_by: EventPointer;
  /** Later events that supplied the ref or bound it to an output, in the counted scope. */
  uses: number;
  /** Such later events anywhere in the events read (the thread), whatever the counted scope. */
  thread_uses: number;
  first_use: RefUse;
  last_use: RefUse;
}

const keyOf = (ref: { type: string; id: string }) => `${ref.type}:${ref.id}`;

function pointer(event: TraceEvent): EventPointer {
  return {
    event_id: event.event_id,
    application_id: event.application_id,
    root_trace_id: event.root_trace_id,
    agent_id: event.agent_id,
    memory_id: event.memory_id,
    thread_id: event.thread_id,
    kind: event.kind,
    ts: event.ts,
  };
}

function deletedRefs(event: TraceEvent): ResourceRef[] {
  return event.resources.filter((ref) =>
    ref.role === "deleted" ||
    (ref.role === undefined && event.kind === "memory_delete")
  );
}

/** Refs the event supplied or bound to its output, by key, with the lanes. */
function usedRefs(event: TraceEvent): Map<string, RefUse["lanes"]> {
  const used = new Map<string, RefUse["lanes"]>();
  const add = (ref: ResourceRef, lane: "supplied" | "output_bound") => {
    const lanes = used.get(keyOf(ref)) ?? [];
    if (!lanes.includes(lane)) lanes.push(lane);
    used.set(keyOf(ref), lanes);
  };
  for (const ref of event.resources) {
    if (ref.role === "supplied" || ref.role === "output_bound") {
      add(ref, ref.role);
    }
  }
  for (const candidate of event.selection?.candidates ?? []) {
    if (candidate.selected) add(candidate.ref, "supplied");
  }
  return used;
}

function servedBy(event: TraceEvent): ServedRef[] {
  const refs = [
    ...(event.selection?.candidates ?? []).filter((c) => c.selected).map((c) =>
      c.ref
    ),
    ...event.resources.filter((ref) => ref.role === "supplied"),
  ];
  const seen = new Map<string, ServedRef>();
  for (const ref of refs) {
    if (!seen.has(keyOf(ref))) {
      seen.set(keyOf(ref), {
        type: ref.type,
        id: ref.id,
        version: ref.version ?? null,
      });
    }
  }
  return [...seen.values()];
}

/** Options of {@link servedAfterDeletion}. */
export interface DeletionUseOptions {
  /** Count only uses in events this accepts (e.g. one root's); deletions count anywhere. */
  usesIn?: (event: TraceEvent) => boolean;
}

/** Refs supplied or bound to an output after an event deleted them, first deleted first. */
export function servedAfterDeletion(
  events: readonly TraceEvent[],
  options: DeletionUseOptions = {},
): DeletionUse[] {
  const ordered = [...events].sort((a, b) =>
    Date.parse(a.ts) - Date.parse(b.ts) || a.seq - b.seq
  );
  const deleted = new Map<string, { ref: ResourceRef; by: TraceEvent }>();
  const found = new Map<string, DeletionUse>();
  // Uses anywhere in the read too, so a root's count and the thread's count
  // of one deleted ref read as two scopes, not two answers.
  const threadUses = new Map<string, number>();
  for (const event of ordered) {
    const counted = options.usesIn?.(event) ?? true;
    for (const [key, lanes] of usedRefs(event)) {
      const deletion = deleted.get(key);
      if (!deletion) continue;
      threadUses.set(key, (threadUses.get(key) ?? 0) + 1);
      if (!counted) continue;
      const use = { ...pointer(event), lanes, served_by: servedBy(event) };
      const entry = found.get(key);
      if (entry) {
        entry.uses++;
        entry.last_use = use;
      } else {
        found.set(key, {
          ref: { type: deletion.ref.type, id: deletion.ref.id },
          deleted_by: pointer(deletion.by),
          uses: 1,
          thread_uses: 0,
          first_use: use,
          last_use: use,
        });
      }
    }
    for (const ref of deletedRefs(event)) {
      if (!deleted.has(keyOf(ref))) deleted.set(keyOf(ref), { ref, by: event });
    }
  }
  for (const [key, use] of found) use.thread_uses = threadUses.get(key)!;
  return [...found.values()].slice(0, MAX_DELETION_USES);
}

/** What a thread's events say about refs served after their deletion. */
export interface ThreadEvidence {
  thread_id: string;
  /** Events with refs or a selection read (the newest). */
  events_read: number;
  read_completeness: ReadCompleteness;
  /** The root whose events alone count as uses; null when every event read counts. */
  uses_counted_in: { application_id: string; root_trace_id: string } | null;
  served_after_deletion: DeletionUse[];
}

/**
 * Reads the newest {@link THREAD_EVIDENCE_EVENTS} events of a thread that
 * carry refs or a selection (any agent, within the tenant scope of
 * `scope`) and finds the refs they served after deleting them; with
 * `options.root`, only uses inside that root count.
 */
export async function readThreadEvidence(
  db: TraceDb,
  threadId: string,
  scope: Pick<TraceFilter, "application_id" | "user_id"> = {},
  options: { root?: { application_id: string; root_trace_id: string } } = {},
): Promise<ThreadEvidence> {
  await requireObs(db);
  const tenant = tenantWhere(scope);
  const rows = await readEventPage(db, {
    where: `e.thread_id = ? AND ${tenant.sql}
      AND (e.resource_count > 0 OR e.candidate_count > 0)`,
    args: [threadId, ...tenant.args],
    order: "desc",
    after: null,
    limit: THREAD_EVIDENCE_EVENTS + 1,
  });
  const read = rows.slice(0, THREAD_EVIDENCE_EVENTS);
  const untrusted = read.some((row) => row.untrusted);
  const root = options.root;
  return {
    thread_id: threadId,
    events_read: read.length,
    read_completeness: untrusted
      ? "untrusted"
      : rows.length > THREAD_EVIDENCE_EVENTS
      ? "partial"
      : "complete",
    uses_counted_in: root
      ? {
        application_id: root.application_id,
        root_trace_id: root.root_trace_id,
      }
      : null,
    served_after_deletion: servedAfterDeletion(
      read.map((row) => row.event),
      root ? { usesIn: (e) => inRoot(e, root) } : {},
    ),
  };
}

function inRoot(
  event: TraceEvent,
  root: { application_id: string; root_trace_id: string },
): boolean {
  return event.application_id === root.application_id &&
    event.root_trace_id === root.root_trace_id;
}

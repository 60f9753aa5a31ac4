/**
 * The task scope of a child that names no root: a mature tracer files a
 * span under its parent's trace, so an event with `parent_event_id` and no
 * `root_trace_id` takes its parent's root when it is written, rather than
 * becoming a root of its own that `--root` would never find. Its root is,
 * in this order:
 *
 * 1. the root its own stored copy has (a resend stays the event it was,
 *    even if its parent arrived since);
 * 2. its parent's root, the parent found in its own batch (chains followed
 *    to their top, in any order), else stored or written by an earlier
 *    batch of the group;
 * 3. else the id of the highest ancestor found: its own, with no parent
 *    known (a parent that arrives later does not move it).
 *
 * Events that name a root cost nothing: without a rootless child in the
 * group there is no lookup at all, and with one there is one indexed
 * lookup per application, of the ids those children name. The roots are
 * read inside the write transaction, so they are what the batch is written
 * against. Private to `ingest/`.
 *
 * @module
 */

import { type NormalizedEvent, withRootTraceId } from "../normalize.ts";
import type { TransactionStatement } from "../erased_events.ts";
import { ownedRows, ownerKey } from "./_owner_key.ts";

/**
 * The stored roots of the events the group's rootless children name
 * (themselves and their parents), keyed by {@link ownerKey}; `null` when
 * no event of the group is such a child.
 */
export async function storedRoots(
  read: TransactionStatement,
  batches: readonly { events: readonly NormalizedEvent[] }[],
): Promise<Map<string, string> | null> {
  const named = new Map<string, Set<string>>();
  for (const { events } of batches) {
    for (const { meta, rootFromParent } of events) {
      if (!rootFromParent) continue;
      const ids = named.get(meta.application_id) ?? new Set<string>();
      ids.add(meta.event_id).add(meta.parent_event_id!);
      named.set(meta.application_id, ids);
    }
  }
  if (named.size === 0) return null;
  const roots = new Map<string, string>();
  for (const [applicationId, ids] of named) {
    const found = await ownedRows(read, applicationId, ids, {
      index: "root_trace_id AS root",
      envelope: "json_extract(body, '$.event.root_trace_id')",
    });
    for (const row of found) {
      const key = ownerKey(applicationId, String(row.event_id));
      if (typeof row.root === "string" && !roots.has(key)) {
        roots.set(key, row.root);
      }
    }
  }
  return roots;
}

/**
 * `events` with each rootless child filed under its root (see the module
 * comment); `known` holds the roots stored or written earlier in the group.
 * Returns `events` itself when no event changes.
 */
export function resolveRoots(
  events: readonly NormalizedEvent[],
  known: ReadonlyMap<string, string>,
): readonly NormalizedEvent[] {
  if (!events.some((event) => event.rootFromParent)) return events;
  const inBatch = new Map<string, NormalizedEvent>();
  for (const event of events) {
    const key = keyOf(event);
    if (!inBatch.has(key)) inBatch.set(key, event);
  }
  const resolved = new Map<string, string>();
  return events.map((event) => {
    if (!event.rootFromParent) return event;
    const root = rootOf(event, inBatch, known, resolved);
    return root === event.meta.root_trace_id
      ? event
      : withRootTraceId(event, root);
  });
}

const keyOf = ({ meta }: NormalizedEvent) =>
  ownerKey(meta.application_id, meta.event_id);

/**
 * The root of `start`, walking up its parents iteratively (a chain may be
 * as long as the batch); every event walked through is given the same root
 * in `resolved`.
 */
function rootOf(
  start: NormalizedEvent,
  inBatch: ReadonlyMap<string, NormalizedEvent>,
  known: ReadonlyMap<string, string>,
  resolved: Map<string, string>,
): string {
  const path: NormalizedEvent[] = [];
  const onPath = new Set<string>();
  let event = start;
  let root: string;
  for (;;) {
    const key = keyOf(event);
    const settled = event.rootFromParent
      ? resolved.get(key) ?? known.get(key)
      : event.meta.root_trace_id;
    if (settled !== undefined) {
      root = settled;
      break;
    }
    if (onPath.has(key)) {
      root = cycleRoot(path, key);
      break;
    }
    path.push(event);
    onPath.add(key);
    const parentKey = ownerKey(
      event.meta.application_id,
      event.meta.parent_event_id!,
    );
    const parent = inBatch.get(parentKey);
    if (parent) {
      event = parent;
      continue;
    }
    root = known.get(parentKey) ?? event.meta.event_id;
    break;
  }
  for (const walked of path) resolved.set(keyOf(walked), root);
  return root;
}

/**
 * Events that name each other as parents, none naming a root, have no top:
 * the least of their ids is their root, whichever of them is met first.
 */
function cycleRoot(path: readonly NormalizedEvent[], key: string): string {
  const from = path.findIndex((event) => keyOf(event) === key);
  return path.slice(from).map(({ meta }) => meta.event_id).sort()[0]!;
}

/**
 * Cleanup: delete every issued id in both namespaces (also ids whose ingest
 * or deletion was never acknowledged), then poll both namespaces (inventory
 * and marker query) until every store reads zero and neither marker is
 * retrievable, or a poll starts at or after the deletion window.
 */

import { STORES } from "../contract/protocol.ts";
import { type Clock, sleepUntil } from "./clock.ts";
import type { RunIdentifiers } from "./ids.ts";
import type { Cleanup, CleanupDelete, InventoryCounts } from "./report.ts";
import type { RunSession } from "./_session.ts";
import { readNamespace } from "./_observe.ts";

/** Options for {@link cleanUp}. */
export interface CleanupOptions {
  issued: { test: string[]; control: string[] };
  windowMs: number;
  intervalMs: number;
  clock: Clock;
}

/** Deletes all issued ids and polls until clean or the window ends. */
export async function cleanUp(
  session: RunSession,
  ids: RunIdentifiers,
  options: CleanupOptions,
): Promise<Cleanup> {
  const start = options.clock.now();
  const deletes: CleanupDelete[] = [];
  for (const role of ["test", "control"] as const) {
    const issued = options.issued[role];
    if (issued.length === 0) continue;
    const namespace = role === "test"
      ? ids.testNamespace
      : ids.controlNamespace;
    const attempt = await session.attempt("delete", role, {
      namespace,
      ids: issued,
    });
    deletes.push({
      namespace: role,
      ids: issued.length,
      acknowledged: attempt.ok,
      error: attempt.ok ? null : attempt.error,
    });
  }
  const remaining: Cleanup["remaining"] = { test: null, control: null };
  const markers: Cleanup["marker_seen"] = { test: null, control: null };
  let polls = 0;
  const pollErrors: string[] = [];
  for (let k = 0;; k++) {
    await sleepUntil(options.clock, start + k * options.intervalMs);
    const startedMs = options.clock.now() - start;
    polls++;
    pollErrors.length = 0;
    for (const role of ["test", "control"] as const) {
      const reading = await readNamespace(session, ids, role);
      remaining[role] = reading.inventory;
      markers[role] = reading.markerSeen;
      pollErrors.push(
        ...reading.errors.map((e) =>
          `${role} ${
            e.op === "query" ? "marker query" : e.op
          } failed: ${e.message}`
        ),
      );
    }
    const clean = (["test", "control"] as const).every((role) =>
      isClean(remaining[role]) && markers[role] === false
    );
    if (clean || startedMs >= options.windowMs) break;
  }
  const problems = cleanupProblems(deletes, remaining, markers, pollErrors);
  return {
    cleanup_complete: problems.length === 0,
    deletes,
    polls,
    remaining,
    marker_seen: markers,
    elapsed_seconds: round((options.clock.now() - start) / 1000),
    problems,
  };
}

function isClean(counts: InventoryCounts | null): boolean {
  return counts !== null && counts.complete &&
    STORES.every((store) => counts[store] === 0);
}

function cleanupProblems(
  deletes: CleanupDelete[],
  remaining: Cleanup["remaining"],
  markers: Cleanup["marker_seen"],
  pollErrors: string[],
): string[] {
  const problems = deletes
    .filter((d) => !d.acknowledged)
    .map((d) =>
      `the ${d.namespace} deletion was not acknowledged (${
        d.error?.failure ?? "unknown"
      })`
    );
  problems.push(...pollErrors);
  for (const role of ["test", "control"] as const) {
    if (markers[role] === true) {
      problems.push(
        `the ${role} marker is still retrievable through /query after cleanup`,
      );
    }
    const counts = remaining[role];
    if (!counts) continue;
    if (!counts.complete) {
      problems.push(`the ${role} inventory answered complete: false`);
    }
    const left = STORES.filter((store) => counts[store] > 0).map((store) =>
      `${store} ${counts[store]}`
    );
    if (left.length > 0) {
      problems.push(
        `${left.join(", ")} left in the ${role} namespace after polling`,
      );
    }
  }
  return problems;
}

/** Rounds seconds to milliseconds for reports. */
export function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

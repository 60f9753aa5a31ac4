/**
 * Cleanup: delete every issued id in both namespaces (also ids whose ingest
 * or deletion was never acknowledged), then poll both namespaces (inventory
 * and marker query) until every store reads zero and neither marker is
 * retrievable, or a poll starts at or after the limit: the deletion window,
 * or after an interrupt the smaller of the window and
 * {@link INTERRUPTED_CLEANUP_LIMIT_MS}, so one Ctrl-C never means an hour of
 * polling.
 */

import { STORES } from "../contract/protocol.ts";
import { type Clock, sleepUntil } from "./clock.ts";
import type { RunEventListener } from "./events.ts";
import type { RunIdentifiers } from "./ids.ts";
import type { Cleanup, CleanupDelete, InventoryCounts } from "./report.ts";
import type { RunSession } from "./_session.ts";
import { readNamespace } from "./_observe.ts";

/** Longest cleanup polling after an interrupt (less when the window is shorter). */
export const INTERRUPTED_CLEANUP_LIMIT_MS = 30_000;

/** Options for {@link cleanUp}. */
export interface CleanupOptions {
  issued: { test: string[]; control: string[] };
  windowMs: number;
  intervalMs: number;
  clock: Clock;
  /** The run's interrupt: already aborted when the run was interrupted before cleanup. */
  signal: AbortSignal | undefined;
  emit: RunEventListener;
}

/** Deletes all issued ids and polls until clean or the limit is reached. */
export async function cleanUp(
  session: RunSession,
  ids: RunIdentifiers,
  options: CleanupOptions,
): Promise<Cleanup> {
  const start = options.clock.now();
  const limit = new PollLimit(options.windowMs, options.signal);
  options.emit({
    type: "cleanup_started",
    limit_seconds: round(limit.ms / 1000),
    interrupted: limit.interrupted,
  });
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
    await sleepUntil(
      options.clock,
      start + k * options.intervalMs,
      limit.interrupted ? undefined : options.signal,
    );
    const startedMs = options.clock.now() - start;
    limit.update(startedMs);
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
    options.emit({
      type: "cleanup_poll",
      poll: polls,
      at_seconds: round(startedMs / 1000),
      limit_seconds: round(limit.ms / 1000),
      clean,
    });
    if (clean || startedMs >= limit.ms) break;
  }
  const problems = cleanupProblems(deletes, remaining, markers, pollErrors);
  return {
    cleanup_complete: problems.length === 0,
    deletes,
    polls,
    limit_seconds: round(limit.ms / 1000),
    interrupted: limit.interrupted,
    remaining,
    marker_seen: markers,
    elapsed_seconds: round((options.clock.now() - start) / 1000),
    problems,
  };
}

/** How long cleanup may poll: the window, cut short by an interrupt. */
class PollLimit {
  ms: number;
  interrupted: boolean;
  #signal: AbortSignal | undefined;
  #afterInterrupt: number;

  constructor(windowMs: number, signal: AbortSignal | undefined) {
    this.#signal = signal;
    this.#afterInterrupt = Math.min(windowMs, INTERRUPTED_CLEANUP_LIMIT_MS);
    this.interrupted = signal?.aborted === true;
    this.ms = this.interrupted ? this.#afterInterrupt : windowMs;
  }

  /** Notes an interrupt that arrived during cleanup: polling ends at most the bound later. */
  update(elapsedMs: number): void {
    if (this.interrupted || !this.#signal?.aborted) return;
    this.interrupted = true;
    this.ms = Math.min(this.ms, elapsedMs + this.#afterInterrupt);
  }
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

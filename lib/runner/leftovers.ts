/**
 * Cleaning up after the fact: what a finished or interrupted run left behind
 * is deleted and polled by the same sweep as a run's own cleanup. Given the
 * run's markers, each poll reads both namespaces exactly as the run's own
 * cleanup does (inventory, then a query for the namespace's marker, both
 * answers searched for both markers), so a clean poll means every store
 * read 0 and neither marker was retrievable. A run kept without markers
 * (stored before they were kept) has its inventories polled only: a clean
 * poll then says nothing about retrieval. An interrupt ends polling after
 * the poll under way, since nothing waits on this cleanup to finish a
 * verdict. As in a run, an interrupt also bounds the requests: the one in
 * flight and those still to send (deletions not yet sent, that last poll)
 * end within the smaller of the window and 30 s of it, instead of at their
 * operation's timeout; one that starts with that bound passed still gets a
 * second, so the whole may take {@link leftoversPastBoundMs} longer.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import type { Clock } from "./clock.ts";
import type { Cleanup, RunMarkers, Sample } from "./report.ts";
import {
  afterInterruptMs,
  cleanPollsNeeded,
  type CleanupLimit,
  type Role,
  settleTimeMs,
  sweep,
} from "./_cleanup.ts";
import { cleanupPastBoundMs, RUN_POLL_REQUESTS } from "./_interrupt_bounds.ts";
import { type NamespaceReading, readNamespace } from "./_observe.ts";
import { RunSession } from "./_session.ts";

/** Requests in one poll without markers: an inventory per namespace. */
const INVENTORY_POLL_REQUESTS = 2;

/**
 * Most a cleanup after the fact may run past its interrupt's bound: more
 * when it queries the markers, as each poll sends twice the requests.
 */
export function leftoversPastBoundMs(queriesMarkers: boolean): number {
  return cleanupPastBoundMs(
    queriesMarkers ? RUN_POLL_REQUESTS : INVENTORY_POLL_REQUESTS,
  );
}

/** What a marker still retrievable after the fact calls for. */
const MARKER_NEXT_STEP = "fix it, then run trace external-cleanup again";

/** One poll, for progress. */
export interface CleanupPoll {
  /** 0 for the poll right after the deletions. */
  index: number;
  started_at_seconds: number;
  window_seconds: number;
  remaining: Cleanup["remaining"];
  /** Whether each marker was retrievable; `null` when it was not queried (no markers kept) or its query failed. */
  marker_seen: Cleanup["marker_seen"];
}

/** Options for {@link cleanUpLeftovers}. */
export interface LeftoversOptions {
  /** The run's namespaces. */
  namespaces: Record<Role, string>;
  /** Every id the run issued in each namespace. */
  issued: Record<Role, string[]>;
  /**
   * The run's markers, queried in both namespaces at every poll; without
   * them only the inventories are polled.
   */
  markers?: RunMarkers | undefined;
  clock: Clock;
  /**
   * The run's window samples, when its report has them: a clean poll ends
   * polling only as long after the deletions as they saw the application
   * still changing.
   */
  samples?: readonly Sample[];
  /**
   * Aborting stops polling after the current poll and calls off a request
   * that outlasts the bound it sets; what was seen so far is returned.
   */
  signal?: AbortSignal | undefined;
  /**
   * Hears the first abort, with how long the cleanup may still take in
   * seconds: the bound, and a second for each request sent past it.
   */
  onInterrupt?: (boundSeconds: number) => void;
  /** Sees each poll of both inventories. */
  onPoll?: (poll: CleanupPoll) => void;
}

/**
 * Deletes a run's issued ids, then polls both namespaces (inventories, and
 * marker queries when the markers are given) until clean or the deletion
 * window ends.
 */
export async function cleanUpLeftovers(
  transport: StagingTransport,
  config: StagingConfig,
  options: LeftoversOptions,
): Promise<Cleanup> {
  // Disposed on every way out: its search thread must not outlive the cleanup.
  using session = new RunSession(transport, config, options.clock, () => {});
  const { signal } = options;
  const onAbort = () => {
    const boundMs = afterInterruptMs(config.deletion_window_seconds * 1000);
    session.boundRequests(options.clock.now() + boundMs);
    try {
      options.onInterrupt?.(
        (boundMs + leftoversPastBoundMs(options.markers !== undefined)) /
          1000,
      );
    } catch {
      // A broken progress display must not stop the cleanup.
    }
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await sweepLeftovers(session, config, options);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

function sweepLeftovers(
  session: RunSession,
  config: StagingConfig,
  options: LeftoversOptions,
): Promise<Cleanup> {
  const { namespaces, markers, onPoll } = options;
  const ids = markers && {
    testNamespace: namespaces.test,
    controlNamespace: namespaces.control,
    marker: markers.test,
    controlMarker: markers.control,
  };
  return sweep(session, {
    namespaces,
    issued: options.issued,
    read: (role) =>
      ids
        ? readNamespace(session, ids, role)
        : readInventory(session, namespaces[role], role),
    ...(ids ? { markerNextStep: MARKER_NEXT_STEP } : {}),
    limit: new WindowLimit(
      config.deletion_window_seconds * 1000,
      options.signal,
    ),
    intervalMs: config.sample_interval_seconds * 1000,
    settleMs: settleTimeMs(options.samples ?? []),
    // Without markers a poll cannot see the marker come back.
    cleanPollsNeeded: ids ? cleanPollsNeeded(options.samples ?? []) : 1,
    clock: options.clock,
    onPoll: (poll) =>
      onPoll?.({
        index: poll.index,
        started_at_seconds: poll.startedMs / 1000,
        window_seconds: config.deletion_window_seconds,
        remaining: poll.remaining,
        marker_seen: poll.markerSeen,
      }),
  });
}

async function readInventory(
  session: RunSession,
  namespace: string,
  role: Role,
): Promise<NamespaceReading> {
  const inventory = await session.attempt("inventory", role, { namespace });
  return {
    inventory: inventory.ok ? inventory.value : null,
    markerSeen: null,
    match: null,
    otherMatch: null,
    errors: inventory.ok ? [] : [inventory.error],
  };
}

/** The deletion window, ended by an interrupt after the poll under way. */
class WindowLimit implements CleanupLimit {
  readonly ms: number;
  #signal: AbortSignal | undefined;

  constructor(windowMs: number, signal: AbortSignal | undefined) {
    this.ms = windowMs;
    this.#signal = signal;
  }

  get interrupted(): boolean {
    return this.#signal?.aborted === true;
  }

  waitSignal(): AbortSignal | undefined {
    return this.#signal;
  }

  update(): void {}

  reached(elapsedMs: number): boolean {
    return elapsedMs >= this.ms || this.interrupted;
  }
}

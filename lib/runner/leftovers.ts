/**
 * Cleaning up after the fact: what a finished or interrupted run left behind
 * is deleted and polled by the same sweep as a run's own cleanup, with two
 * differences. The markers are not queried (the inventories are what counts
 * here), and an interrupt ends polling after the poll under way, since
 * nothing waits on this cleanup to finish a verdict. As in a run, an
 * interrupt also bounds the requests: the one in flight and those still to
 * send (deletions not yet sent, that last poll) end within the smaller of
 * the window and 30 s of it, instead of at their operation's timeout; one
 * that starts with that bound passed still gets a second, so the whole may
 * take {@link LEFTOVERS_PAST_BOUND_MS} longer.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import type { Clock } from "./clock.ts";
import type { Cleanup, Sample } from "./report.ts";
import {
  afterInterruptMs,
  type CleanupLimit,
  cleanupPastBoundMs,
  type Role,
  settleTimeMs,
  sweep,
} from "./_cleanup.ts";
import type { NamespaceReading } from "./_observe.ts";
import { RunSession } from "./_session.ts";

/** Requests in one poll after the fact: an inventory per namespace. */
const LEFTOVERS_POLL_REQUESTS = 2;

/** Most a cleanup after the fact may run past its interrupt's bound. */
export const LEFTOVERS_PAST_BOUND_MS = cleanupPastBoundMs(
  LEFTOVERS_POLL_REQUESTS,
);

/** One poll, for progress. */
export interface CleanupPoll {
  /** 0 for the poll right after the deletions. */
  index: number;
  started_at_seconds: number;
  window_seconds: number;
  remaining: Cleanup["remaining"];
}

/** Options for {@link cleanUpLeftovers}. */
export interface LeftoversOptions {
  /** The run's namespaces. */
  namespaces: Record<Role, string>;
  /** Every id the run issued in each namespace. */
  issued: Record<Role, string[]>;
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

/** Deletes a run's issued ids, then polls both inventories until clean or the deletion window ends. */
export async function cleanUpLeftovers(
  transport: StagingTransport,
  config: StagingConfig,
  options: LeftoversOptions,
): Promise<Cleanup> {
  const session = new RunSession(transport, config, options.clock, () => {});
  const { signal } = options;
  const onAbort = () => {
    const boundMs = afterInterruptMs(config.deletion_window_seconds * 1000);
    session.boundRequests(options.clock.now() + boundMs);
    try {
      options.onInterrupt?.((boundMs + LEFTOVERS_PAST_BOUND_MS) / 1000);
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
  const { namespaces, onPoll } = options;
  return sweep(session, {
    namespaces,
    issued: options.issued,
    read: (role) => readInventory(session, namespaces[role], role),
    limit: new WindowLimit(
      config.deletion_window_seconds * 1000,
      options.signal,
    ),
    intervalMs: config.sample_interval_seconds * 1000,
    settleMs: settleTimeMs(options.samples ?? []),
    clock: options.clock,
    onPoll: (poll) =>
      onPoll?.({
        index: poll.index,
        started_at_seconds: poll.startedMs / 1000,
        window_seconds: config.deletion_window_seconds,
        remaining: poll.remaining,
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

/**
 * Cleaning up after the fact: what a finished or interrupted run left behind
 * is deleted and polled by the same sweep as a run's own cleanup, with two
 * differences. The markers are not queried (the inventories are what counts
 * here), and an interrupt ends polling at once, since nothing waits on this
 * cleanup to finish a verdict.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import type { Clock } from "./clock.ts";
import type { Cleanup, Sample } from "./report.ts";
import {
  type CleanupLimit,
  type Role,
  settleTimeMs,
  sweep,
} from "./_cleanup.ts";
import type { NamespaceReading } from "./_observe.ts";
import { RunSession } from "./_session.ts";

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
  /** Aborting stops polling after the current poll; what was seen so far is returned. */
  signal?: AbortSignal | undefined;
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
  const { namespaces, onPoll } = options;
  return await sweep(session, {
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

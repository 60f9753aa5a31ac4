/**
 * `external-cleanup`: removing what a run left behind, after the fact. For
 * a run whose cleanup was incomplete, or that was interrupted before it
 * could clean up, the issued ids (from its report, else its checkpoint) are
 * deleted in both namespaces through the run's target adapter, both
 * namespaces are polled through the target's deletion window, and the
 * outcome is appended to the ledger as a `cleanup` entry linked to the run.
 * Each poll reads the inventories and queries the run's markers (kept in
 * its report and checkpoint) as the run's own cleanup does, so `complete`
 * means what it means there: every store read 0 and neither marker was
 * retrievable. A run stored before its markers were kept has only its
 * inventories polled: the best it can say is that every deletion was
 * acknowledged and the inventories read 0, never that nothing can be
 * retrieved (a soft delete or an answer cache may still serve deleted
 * text). Reference runs have nothing to clean: their systems lived in
 * memory.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import type { TraceDb } from "../db.ts";
import { errorMessage, NotFoundError, RefusedError } from "../errors.ts";
import {
  type CleanupRecord,
  cleanupsOf,
  type CleanupStatus,
  cleanupStatus,
  type DeletionCounts,
  deletionCounts,
  markersQueried,
  recordCleanup,
} from "../ledger/cleanups.ts";
import type { LedgerHead } from "../ledger/head.ts";
import { requireLedger } from "../ledger/schema.ts";
import { readTarget, type TargetRecord, targetRef } from "../ledger/targets.ts";
import { targetTransport } from "./target_transport.ts";
import { type Clock, systemClock } from "../runner/clock.ts";
import { cleanUpLeftovers, type CleanupPoll } from "../runner/leftovers.ts";
import type { Cleanup, RunMarkers, Sample } from "../runner/report.ts";
import {
  AdapterUnreachableError,
  checkAdapterReachable,
} from "./reachability.ts";
import { locateRun } from "./run_view.ts";

/** Options for {@link cleanUpRun}. */
export interface CleanupRunOptions {
  /** The data directory whose checkpoints list interrupted runs' ids. */
  dataDir: string;
  /** Environment lookup for `token_env`. */
  env?: (name: string) => string | undefined;
  /** A transport instead of the strict HTTP client (tests); closed afterwards. */
  transport?: StagingTransport;
  /** Time source (tests); the system clock by default. */
  clock?: Clock;
  /**
   * Aborting stops polling after the poll under way and calls off a request
   * still unanswered the smaller of the window and 30 s later (a deletion
   * called off is recorded as not acknowledged); what was seen so far is
   * recorded.
   */
  signal?: AbortSignal;
  /** Hears the first abort, with how long the cleanup may still take in seconds. */
  onInterrupt?: (boundSeconds: number) => void;
  /** Called once the adapter answered, before the first deletion is sent. */
  onStart?: () => void;
  /** Sees each poll of both inventories (progress). */
  onPoll?: (poll: CleanupPoll) => void;
  /** Liveness of a checkpoint's writer (tests). */
  isAlive?: (pid: number) => boolean;
}

export type { CleanupPoll };

/**
 * What `external-cleanup` did: `complete` when every deletion was
 * acknowledged, every store of both namespaces read 0 and neither marker
 * was retrievable (`record.markers_queried` true), `inventories_clear` when
 * the run kept no markers and every deletion was acknowledged and every
 * store read 0 (retrieval was not checked), `incomplete` when records may
 * remain or still be served (`record.outcome.problems` says why),
 * `not_needed` when there was nothing to do. The deletion counts say
 * what `record.outcome.deletes` holds: requests, and the ids they named.
 */
export type CleanupOutcome =
  | ({
    status: CleanupStatus;
    record: CleanupRecord;
    /** Where the record went: its ledger entry and the head after it, or why the ledger refused it. */
    recorded: { seq: number; head: LedgerHead } | { error: string };
  } & DeletionCounts)
  | {
    status: "not_needed";
    run_id: string;
    /** Why there is nothing to clean, in words. */
    reason: string;
  };

/** What is to be cleaned, found from the run id. */
interface Leftovers {
  runId: string;
  targetId: string;
  configDigest: string;
  idsFrom: CleanupRecord["ids_from"];
  namespaces: { test: string; control: string };
  /** The run's markers; absent for a run stored before they were kept. */
  markers: RunMarkers | undefined;
  issued: { test: string[]; control: string[] };
  /** The run's window samples (none from a checkpoint). */
  samples: readonly Sample[];
}

/** Deletes a run's leftover synthetic records and records the outcome. */
export async function cleanUpRun(
  db: TraceDb,
  runId: string,
  options: CleanupRunOptions,
): Promise<CleanupOutcome> {
  await requireLedger(db);
  const found = await leftoversOf(db, runId, options);
  if ("reason" in found) {
    return { status: "not_needed", run_id: runId, reason: found.reason };
  }
  const target = await storedTarget(db, found);
  const config = target.config;
  const transport = options.transport ??
    targetTransport(config, targetRef(target), options.env);
  const clock = options.clock ?? systemClock;
  const startedAt = clock.wallNow().toISOString();
  let outcome: Cleanup;
  try {
    await reachable(found.runId, config, transport);
    options.onStart?.();
    outcome = await cleanUpLeftovers(transport, config, {
      namespaces: found.namespaces,
      issued: found.issued,
      markers: found.markers,
      samples: found.samples,
      clock,
      signal: options.signal,
      ...(options.onPoll ? { onPoll: options.onPoll } : {}),
      ...(options.onInterrupt ? { onInterrupt: options.onInterrupt } : {}),
    });
  } finally {
    await transport.close?.();
  }
  const record: CleanupRecord = {
    schema: "trace.cleanup/1",
    cleanup_id: cleanupId(found.runId, clock.wallNow()),
    run_id: found.runId,
    target_id: found.targetId,
    ids_from: found.idsFrom,
    namespaces: found.namespaces,
    issued: {
      test: found.issued.test.length,
      control: found.issued.control.length,
    },
    started_at: startedAt,
    finished_at: clock.wallNow().toISOString(),
    markers_queried: found.markers !== undefined,
    outcome,
  };
  const done = {
    status: cleanupStatus(record),
    record,
    ...deletionCounts(outcome),
  };
  try {
    const { seq, head } = await recordCleanup(db, record);
    return { ...done, recorded: { seq, head } };
  } catch (error) {
    return { ...done, recorded: { error: errorMessage(error) } };
  }
}

/**
 * A dead adapter fails at once, before any deletion is sent or anything is
 * recorded: polling it through the window would only record connection
 * errors about records nobody could reach.
 */
async function reachable(
  runId: string,
  config: StagingConfig,
  transport: StagingTransport,
): Promise<void> {
  try {
    await checkAdapterReachable(config, transport);
  } catch (error) {
    if (!(error instanceof AdapterUnreachableError)) throw error;
    const detail = error.cause instanceof Error
      ? error.cause.message
      : errorMessage(error);
    throw new AdapterUnreachableError(
      `Cannot clean up run ${runId}: the staging adapter at ${config.base_url} cannot be reached (${detail}); start it and run trace external-cleanup ${runId} again (nothing was deleted or recorded)`,
      { cause: error },
    );
  }
}

async function leftoversOf(
  db: TraceDb,
  runId: string,
  options: CleanupRunOptions,
): Promise<Leftovers | { reason: string }> {
  const located = await locateRun(db, runId, {
    dataDir: options.dataDir,
    ledger: true,
    ...(options.isAlive ? { isAlive: options.isAlive } : {}),
  });
  if (located.found === "checkpoint") {
    const { checkpoint, running } = located;
    if (running) {
      throw new RefusedError(
        `Cannot clean up run ${runId}: process ${checkpoint.pid} is still running it, and it cleans up itself when it ends (Ctrl-C there stops its window early)`,
      );
    }
    return await unlessCleaned(db, {
      runId,
      targetId: checkpoint.target.id,
      configDigest: checkpoint.config_digest,
      idsFrom: "checkpoint",
      namespaces: checkpoint.namespaces,
      markers: checkpoint.markers,
      issued: checkpoint.issued,
      samples: [],
    }, null);
  }
  const { report } = located;
  if (report.kind === "reference") {
    return {
      reason:
        "it is a reference run: its system lived in memory inside the run, so nothing was left behind",
    };
  }
  return await unlessCleaned(db, {
    runId,
    targetId: report.target.id,
    configDigest: report.config_digest,
    idsFrom: "report",
    namespaces: report.namespaces,
    markers: report.markers,
    issued: report.issued,
    samples: report.samples,
  }, report.cleanup.cleanup_complete);
}

/** Nothing to do when the run's own cleanup, or a later one, completed. */
async function unlessCleaned(
  db: TraceDb,
  leftovers: Leftovers,
  ownCleanupComplete: boolean | null,
): Promise<Leftovers | { reason: string }> {
  if (ownCleanupComplete) {
    return {
      reason:
        "its own cleanup completed: every store of both namespaces read 0 and neither marker was retrievable",
    };
  }
  // A later cleanup that read what another would read settles it; one that
  // could not query markers this run has does not.
  const later = (await cleanupsOf(db, leftovers.runId, leftovers.targetId))
    .filter((c) =>
      c.outcome.cleanup_complete &&
      (markersQueried(c) || leftovers.markers === undefined)
    ).at(-1);
  if (later) {
    return {
      reason: markersQueried(later)
        ? `cleanup ${later.cleanup_id} on ${later.finished_at} completed: every deletion was acknowledged, every store of both namespaces read 0 and neither marker was retrievable`
        : `cleanup ${later.cleanup_id} on ${later.finished_at} had every deletion acknowledged and every store of both namespaces read 0 (its markers were not kept, so retrieval was not checked)`,
    };
  }
  if (leftovers.issued.test.length + leftovers.issued.control.length === 0) {
    return { reason: "it issued no synthetic id before it stopped" };
  }
  return leftovers;
}

/** The run's target as stored, whose config must still be the one the run used. */
async function storedTarget(
  db: TraceDb,
  leftovers: Leftovers,
): Promise<TargetRecord> {
  const target = await readTarget(db, leftovers.targetId);
  if (!target) {
    throw new NotFoundError(
      `Cannot clean up run ${leftovers.runId}: its target "${leftovers.targetId}" was never registered (a config run such as trace quickstart's, whose in-process demo took its records with it), so its adapter is unknown; if that adapter still runs, delete namespaces ${leftovers.namespaces.test} and ${leftovers.namespaces.control} with the application's own tools`,
    );
  }
  if (target.config_digest !== leftovers.configDigest) {
    throw new RefusedError(
      `Cannot clean up run ${leftovers.runId}: target "${leftovers.targetId}" is registered with another config than the run used`,
    );
  }
  return target;
}

/** A cleanup id: sortable, unique, naming its run. */
function cleanupId(runId: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const random = crypto.getRandomValues(new Uint8Array(3));
  return `cleanup-${stamp}-${
    Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("")
  }-${runId.replace(/^run-/, "")}`;
}

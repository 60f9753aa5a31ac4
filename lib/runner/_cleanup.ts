/**
 * Cleanup: delete every issued id in both namespaces (also ids whose ingest
 * or deletion was never acknowledged), then poll both namespaces until every
 * store reads zero and no marker is retrievable, or a poll starts at or after
 * the limit. A clean poll ends polling only once the application has had as
 * long to settle since the last deletion as the window saw its counts keep
 * changing (`settleMs`): a re-index that writes deleted records back after a
 * delay does so to the cleanup's deletions too. A namespace whose records
 * come back after a clean poll is deleted again (at most
 * {@link MAX_REPEAT_DELETES} times each). After an interrupt neither holds:
 * the first clean poll ends polling and nothing is deleted again, so a
 * Ctrl-C gets out fast. The run's own cleanup ({@link cleanUp}) polls
 * inventories and marker queries up to the deletion window; after an
 * interrupt, only until the bound the interrupt set (the smaller of the
 * window and {@link INTERRUPTED_CLEANUP_LIMIT_MS} after it, the request it
 * arrived during included), so one Ctrl-C never means an hour, nor twice the
 * bound, of waiting; its deletions and last poll may still run
 * `cleanupPastBoundMs` (`_interrupt_bounds.ts`) past that bound. A cleanup after the fact
 * (`leftovers.ts`) polls the same way when the run kept its markers, and
 * inventories only when it did not, and stops at an interrupt. Whoever owns
 * the interrupt sets the session's bound; the sweep only keeps within it.
 */

import { STORES } from "../contract/protocol.ts";
import { type Clock, sleepUntil } from "./clock.ts";
import type { RunEventListener } from "./events.ts";
import type { RunIdentifiers } from "./ids.ts";
import type {
  Cleanup,
  CleanupDelete,
  InventoryCounts,
  RequestErrorRecord,
  Sample,
} from "./report.ts";
import { requestDetail } from "./_request_errors.ts";
import type { RunSession } from "./_session.ts";
import { type NamespaceReading, readNamespace } from "./_observe.ts";
import { joinAnd } from "../words.ts";

/** Longest cleanup polling after an interrupt (less when the window is shorter). */
export const INTERRUPTED_CLEANUP_LIMIT_MS = 30_000;

/**
 * How long everything may still take after an interrupt, the request in
 * flight and cleanup together: the smaller of the window and
 * {@link INTERRUPTED_CLEANUP_LIMIT_MS}.
 */
export function afterInterruptMs(windowMs: number): number {
  return Math.min(windowMs, INTERRUPTED_CLEANUP_LIMIT_MS);
}

/** Most deletions repeated in one namespace for records that came back after a clean poll. */
export const MAX_REPEAT_DELETES = 3;

const ROLES = ["test", "control"] as const;

/** A namespace's role in a run. */
export type Role = typeof ROLES[number];

/** Options for {@link cleanUp}. */
export interface CleanupOptions {
  issued: Record<Role, string[]>;
  windowMs: number;
  intervalMs: number;
  /** How long after a deletion the window saw the application still changing ({@link settleTimeMs}). */
  settleMs: number;
  /** Clean polls in a row that end polling ({@link cleanPollsNeeded}). */
  cleanPollsNeeded: number;
  /**
   * Why a clean poll cannot show the records are gone (they were never
   * seen to arrive), or `null`: then cleanup cannot be complete.
   */
  unconfirmed?: string | null;
  clock: Clock;
  /** The run's interrupt: already aborted when the run was interrupted before cleanup. */
  signal: AbortSignal | undefined;
  emit: RunEventListener;
}

/** The run's own cleanup: deletes all issued ids and polls until clean or the limit is reached. */
export async function cleanUp(
  session: RunSession,
  ids: RunIdentifiers,
  options: CleanupOptions,
): Promise<Cleanup> {
  const limit = new InterruptibleLimit(
    options.windowMs,
    options.signal,
    () => session.leftOfBoundMs(),
  );
  options.emit({
    type: "cleanup_started",
    limit_seconds: round(limit.ms / 1000),
    settle_seconds: limit.interrupted ? 0 : round(options.settleMs / 1000),
    interrupted: limit.interrupted,
  });
  const cleanup = await sweep(session, {
    namespaces: { test: ids.testNamespace, control: ids.controlNamespace },
    issued: options.issued,
    read: (role) => readNamespace(session, ids, role),
    limit,
    intervalMs: options.intervalMs,
    settleMs: options.settleMs,
    cleanPollsNeeded: options.cleanPollsNeeded,
    clock: options.clock,
    onPoll: (poll) =>
      options.emit({
        type: "cleanup_poll",
        poll: poll.index + 1,
        at_seconds: round(poll.startedMs / 1000),
        limit_seconds: round(poll.limitMs / 1000),
        clean: poll.clean,
        deleted_again: poll.deletedAgain,
      }),
  });
  if (!options.unconfirmed || !cleanup.cleanup_complete) return cleanup;
  // Nothing was seen to arrive, so nothing can be seen to be gone.
  return {
    ...cleanup,
    cleanup_complete: false,
    problems: [
      `no poll can confirm the synthetic records are gone: ${options.unconfirmed}; check later with trace external-cleanup`,
    ],
  };
}

/** When polling ends. */
export interface CleanupLimit {
  /** The limit, in milliseconds since cleanup started. */
  readonly ms: number;
  /** Whether an interrupt has been noticed. */
  readonly interrupted: boolean;
  /** What may cut a wait between polls short. */
  waitSignal(): AbortSignal | undefined;
  /** Notes the start of a poll. */
  update(elapsedMs: number): void;
  /** Whether the poll that started at `elapsedMs` is the last one. */
  reached(elapsedMs: number): boolean;
}

/** One poll of both namespaces, for progress. */
export interface SweepPoll {
  /** 0 for the poll right after the deletions. */
  index: number;
  startedMs: number;
  limitMs: number;
  remaining: Cleanup["remaining"];
  /** Whether each marker was retrievable (`null` for both when nobody queried them). */
  markerSeen: Cleanup["marker_seen"];
  clean: boolean;
  /** Namespaces whose records came back after a clean poll, deleted again after this poll. */
  deletedAgain: Role[];
}

/** What a sweep deletes and how it reads what is left. */
export interface Sweep {
  namespaces: Record<Role, string>;
  issued: Record<Role, string[]>;
  read: (role: Role) => Promise<NamespaceReading>;
  limit: CleanupLimit;
  intervalMs: number;
  /** A clean poll ends polling only this long after the last deletion or later. */
  settleMs: number;
  /**
   * Clean polls in a row that end polling ({@link cleanPollsNeeded}): more
   * than one when the window saw the marker come back after clean reads.
   */
  cleanPollsNeeded: number;
  clock: Clock;
  onPoll: (poll: SweepPoll) => void;
  /**
   * What a marker still seen at the last poll calls for, added to its
   * problem line; a run's own cleanup has none (its findings say it).
   */
  markerNextStep?: string;
}

/** Deletes every issued id, then polls both namespaces until clean and settled, or the limit is reached. */
export async function sweep(
  session: RunSession,
  plan: Sweep,
): Promise<Cleanup> {
  const { clock, limit } = plan;
  const start = clock.now();
  session.keepSendingPastBound();
  const deletes = await deleteIssued(session, plan, ROLES);
  let lastDeleteMs = clock.now() - start;
  const remaining: Cleanup["remaining"] = { test: null, control: null };
  const markers: Cleanup["marker_seen"] = { test: null, control: null };
  const seenIn: Record<Role, "query" | "inventory" | null> = {
    test: null,
    control: null,
  };
  const seenClean: Record<Role, boolean> = { test: false, control: false };
  const repeats: Record<Role, number> = { test: 0, control: 0 };
  let polls = 0;
  let cleanInARow = 0;
  const needed = plan.cleanPollsNeeded;
  const pollErrors: RequestErrorRecord[] = [];
  let unsettled: string | null = null;
  for (let k = 0;; k++) {
    const due = start + k * plan.intervalMs;
    // After an interrupt the last poll comes at the limit, however long the interval.
    await sleepUntil(
      clock,
      limit.interrupted ? Math.min(due, start + limit.ms) : due,
      limit.waitSignal(),
    );
    const startedMs = clock.now() - start;
    limit.update(startedMs);
    polls++;
    pollErrors.length = 0;
    const cameBack: Role[] = [];
    let clean = true;
    const readings = await readBoth(plan);
    for (const role of ROLES) {
      const reading = readings[role];
      remaining[role] = reading.inventory;
      markers[role] = reading.markerSeen;
      seenIn[role] = reading.match?.answer ?? null;
      pollErrors.push(...reading.errors);
      const state = roleState(reading);
      clean &&= state === "clean";
      if (state === "clean") seenClean[role] = true;
      if (state === "records" && seenClean[role]) cameBack.push(role);
    }
    cleanInARow = clean ? cleanInARow + 1 : 0;
    // Half an interval of slack: polls and samples keep the same grid, and a
    // deletion's own round trip shifts it by a few milliseconds.
    const settled = limit.interrupted ||
      startedMs - lastDeleteMs + plan.intervalMs / 2 >= plan.settleMs;
    const trusted = limit.interrupted || cleanInARow >= needed;
    // After an interrupt a poll that ran past the limit is the last: another
    // would add its requests, a second each, to what the interrupt promised.
    const last = limit.reached(startedMs) || (clean && settled && trusted) ||
      (limit.interrupted && limit.reached(clock.now() - start));
    const repeated = repeats.test + repeats.control;
    // A last poll clean too soon after deleting records that came back proves nothing.
    unsettled = last && clean && !settled && repeated > 0
      ? `records came back after a clean poll (deleted again ${repeated} time(s)), and the last poll, clean ${
        round((startedMs - lastDeleteMs) / 1000)
      } s after the last deletion, came before the ${
        round(plan.settleMs / 1000)
      } s the window saw the counts change: they may come back again`
      // A marker that came back after clean reads needs more of them in a row.
      : last && clean && !trusted
      ? `the window saw the marker come back after ${
        needed - 1
      } clean read(s), and only ${cleanInARow} clean poll(s) in a row came before cleanup's limit: it may come back again`
      : null;
    // Records back after a clean poll: the application wrote them again.
    const again = last || limit.interrupted
      ? []
      : cameBack.filter((role) =>
        plan.issued[role].length > 0 && repeats[role] < MAX_REPEAT_DELETES
      );
    plan.onPoll({
      index: k,
      startedMs,
      limitMs: limit.ms,
      remaining: { ...remaining },
      markerSeen: { ...markers },
      clean,
      deletedAgain: again,
    });
    if (last) break;
    if (again.length > 0) {
      deletes.push(...await deleteIssued(session, plan, again));
      for (const role of again) repeats[role]++;
      lastDeleteMs = clock.now() - start;
      for (const role of again) seenClean[role] = false;
    }
  }
  const problems = cleanupProblems(
    deletes,
    remaining,
    pollErrors,
    markerProblems(markers, seenIn, plan.markerNextStep),
  );
  if (unsettled) problems.push(unsettled);
  return {
    cleanup_complete: problems.length === 0,
    deletes,
    polls,
    limit_seconds: round(limit.ms / 1000),
    interrupted: limit.interrupted,
    remaining,
    marker_seen: markers,
    elapsed_seconds: round((clock.now() - start) / 1000),
    problems,
  };
}

/**
 * Both namespaces' readings of one poll, each marker counted as seen when
 * either namespace's answer carried it: after cleanup neither record should
 * be retrievable from anywhere.
 */
async function readBoth(plan: Sweep): Promise<Record<Role, NamespaceReading>> {
  const test = await plan.read("test");
  const control = await plan.read("control");
  const withOther = (
    own: NamespaceReading,
    other: NamespaceReading,
  ): NamespaceReading =>
    other.otherMatch === null ? own : { ...own, markerSeen: true };
  return { test: withOther(test, control), control: withOther(control, test) };
}

/**
 * What one poll read of a namespace: clean (every request answered, every
 * store 0, no marker retrievable; a marker nobody queried, after the fact,
 * neither blocks nor proves it), records counted or a marker retrievable,
 * or not known.
 */
function roleState(
  reading: Pick<NamespaceReading, "inventory" | "markerSeen" | "errors">,
): "clean" | "records" | "unknown" {
  if (reading.markerSeen === true) return "records";
  const counts = reading.inventory;
  if (counts && STORES.some((store) => counts[store] > 0)) return "records";
  return reading.errors.length === 0 && isClean(counts) ? "clean" : "unknown";
}

async function deleteIssued(
  session: RunSession,
  plan: Sweep,
  roles: readonly Role[],
): Promise<CleanupDelete[]> {
  const deletes: CleanupDelete[] = [];
  for (const role of roles) {
    const issued = plan.issued[role];
    if (issued.length === 0) continue;
    const attempt = await session.attempt("delete", role, {
      namespace: plan.namespaces[role],
      ids: issued,
    });
    deletes.push({
      namespace: role,
      ids: issued.length,
      acknowledged: attempt.ok,
      error: attempt.ok ? null : attempt.error,
    });
  }
  return deletes;
}

/**
 * The run's limit: the window, cut short by an interrupt but still polled
 * until the bound it set, which counts from the interrupt: time the request
 * in flight took is time cleanup no longer has.
 */
class InterruptibleLimit implements CleanupLimit {
  ms: number;
  interrupted: boolean;
  #signal: AbortSignal | undefined;
  #afterInterrupt: number;
  #leftOfBound: () => number | null;

  /** `leftOfBound` reads how long is left until the interrupt's bound. */
  constructor(
    windowMs: number,
    signal: AbortSignal | undefined,
    leftOfBound: () => number | null,
  ) {
    this.#signal = signal;
    this.#afterInterrupt = afterInterruptMs(windowMs);
    this.#leftOfBound = leftOfBound;
    this.interrupted = signal?.aborted === true;
    this.ms = this.interrupted ? Math.min(windowMs, this.#left()) : windowMs;
  }

  /** What is left of the bound (all of it if the owner set none). */
  #left(): number {
    return this.#leftOfBound() ?? this.#afterInterrupt;
  }

  waitSignal(): AbortSignal | undefined {
    // Once interrupted, polls keep their interval until the bound.
    return this.interrupted ? undefined : this.#signal;
  }

  /** Notes an interrupt that arrived during cleanup: polling ends at its bound. */
  update(elapsedMs: number): void {
    if (this.interrupted || !this.#signal?.aborted) return;
    this.interrupted = true;
    this.ms = Math.min(this.ms, elapsedMs + this.#left());
  }

  reached(elapsedMs: number): boolean {
    return elapsedMs >= this.ms;
  }
}

function isClean(counts: InventoryCounts | null): boolean {
  return counts !== null && counts.complete &&
    STORES.every((store) => counts[store] === 0);
}

/** The line of each marker still seen at the last poll, with `nextStep` when given. */
function markerProblems(
  markers: Cleanup["marker_seen"],
  seenIn: Record<Role, "query" | "inventory" | null>,
  nextStep: string | undefined,
): Record<Role, string | null> {
  const lineOf = (role: Role): string | null => {
    if (markers[role] !== true) return null;
    const listed = seenIn[role] === "inventory";
    const line = listed
      ? `the ${role} marker is still listed in an /inventory answer after cleanup`
      : `the ${role} marker is still retrievable through /query after cleanup`;
    if (nextStep === undefined) return line;
    return `${line}: the application still ${
      listed ? "holds" : "serves"
    } the deleted text; ${nextStep}`;
  };
  return { test: lineOf("test"), control: lineOf("control") };
}

function cleanupProblems(
  deletes: CleanupDelete[],
  remaining: Cleanup["remaining"],
  pollErrors: RequestErrorRecord[],
  markerLines: Record<Role, string | null>,
): string[] {
  const problems = requestProblems(deletes, pollErrors);
  for (const role of ROLES) {
    const markerLine = markerLines[role];
    if (markerLine !== null) problems.push(markerLine);
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

/**
 * Unacknowledged deletions and failed poll requests, one line per distinct
 * error: an adapter that went away fails every request alike, and the note
 * says so once, naming each request it failed.
 */
function requestProblems(
  deletes: CleanupDelete[],
  pollErrors: RequestErrorRecord[],
): string[] {
  const groups = new Map<string, { deletions: Role[]; reads: string[] }>();
  const groupOf = (detail: string) => {
    const group = groups.get(detail) ?? { deletions: [], reads: [] };
    groups.set(detail, group);
    return group;
  };
  for (const d of deletes) {
    if (d.acknowledged) continue;
    const detail = d.error ? requestDetail(d.error) : "no acknowledgement";
    groupOf(detail).deletions.push(d.namespace);
  }
  for (const e of pollErrors) {
    const op = e.op === "query" ? "marker query" : e.op;
    groupOf(requestDetail(e)).reads.push(`${e.namespace} ${op}`);
  }
  return [...groups].map(([detail, group]) => {
    // A namespace deleted again may fail again: it is named once.
    const deletions = [...new Set(group.deletions)];
    const parts = [];
    if (deletions.length === 1) {
      parts.push(`the ${deletions[0]} deletion was not acknowledged`);
    } else if (deletions.length > 1) {
      parts.push(`the ${joinAnd(deletions)} deletions were not acknowledged`);
    }
    if (group.reads.length > 0) parts.push(`${joinAnd(group.reads)} failed`);
    return `${parts.join(", and ")}: ${detail}`;
  });
}

/**
 * How long after the deletion the window saw the application's counts still
 * changing: when the last sample began whose test inventory differed from
 * the one before it (0 without such a sample). A delayed re-index shows
 * here as counts back above 0, a slow store as counts that fall late, and a
 * cleanup waits as long before it trusts a clean poll. The marker is left
 * out here: an answer may show it or not from one query to the next, which
 * {@link cleanPollsNeeded} answers with clean polls in a row instead.
 */
export function settleTimeMs(samples: readonly Sample[]): number {
  let settle = 0;
  let previous: InventoryCounts | undefined;
  for (const sample of samples) {
    const counts = sample.inventory;
    if (counts === null) continue;
    if (
      previous && STORES.some((store) => previous![store] !== counts[store])
    ) {
      settle = sample.started_at_seconds * 1000;
    }
    previous = counts;
  }
  return settle;
}

/**
 * How many clean polls in a row a cleanup needs before it trusts them: one
 * more than the longest run of clean reads the window saw the test marker
 * come back after (a stale replica answers clean and not by turns), and 1
 * when it never came back.
 */
export function cleanPollsNeeded(samples: readonly Sample[]): number {
  let longest = 0;
  let run = 0;
  for (const sample of samples) {
    if (sample.marker_seen === false) run++;
    else if (sample.marker_seen === true) {
      longest = Math.max(longest, run);
      run = 0;
    }
  }
  return longest + 1;
}

/** Rounds seconds to milliseconds for reports. */
export function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

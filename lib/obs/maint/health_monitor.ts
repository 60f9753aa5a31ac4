/**
 * Health for a server: cheap enough to ask at any rate at a million events.
 * Every figure of a report is read fresh except the link checks (missing
 * parents, unindexed envelopes, unregistered profiles), which read every
 * event: on an index of more than {@link HealthMonitorOptions.freshBelowEvents}
 * events the monitor keeps the last ones for up to `maxAgeMs`, and once they
 * are older answers with them (stating their age) while one refresh runs in
 * the background. Concurrent callers share one report in progress, and one
 * link check in progress.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { linkChecks, type LinkCounts } from "./_health_checks.ts";
import type { RetentionMarks } from "./_state.ts";
import {
  healthReport,
  type LinkCheck,
  type ObsHealth,
  type ObsHealthOptions,
} from "./health.ts";

/** Link checks are kept at most this long by default (ms). */
export const DEFAULT_LINK_CHECK_MAX_AGE_MS = 60_000;
/** Up to this many events, link checks are computed for every report (one slice of reads). */
export const FRESH_LINK_CHECK_EVENTS = 20_000;

/** Options for {@link HealthMonitor}. */
export interface HealthMonitorOptions extends ObsHealthOptions {
  /** How long link checks are used before a refresh starts (default 60 s). */
  maxAgeMs?: number;
  /** Indexes with at most this many events get fresh link checks every time (default 20,000). */
  freshBelowEvents?: number;
}

interface Computed {
  counts: LinkCounts;
  at: number;
}

/** Reports health from kept link checks; see the module doc. */
export class HealthMonitor {
  readonly #db: TraceDb;
  readonly #options: HealthMonitorOptions;
  #last: Computed | undefined;
  #refreshing: Promise<Computed> | undefined;
  #reporting: Promise<ObsHealth> | undefined;

  /** A monitor of `db`; nothing is computed until the first report. */
  constructor(db: TraceDb, options: HealthMonitorOptions = {}) {
    this.#db = db;
    this.#options = options;
  }

  /** The current report; concurrent callers share one. */
  report(): Promise<ObsHealth> {
    this.#reporting ??= healthReport(
      this.#db,
      this.#options,
      (marks, events) => this.#links(marks, events),
    ).finally(() => this.#reporting = undefined);
    return this.#reporting;
  }

  /** Resolves once no refresh runs in the background (before closing the database). */
  async idle(): Promise<void> {
    await this.#refreshing?.catch(() => {});
  }

  async #links(marks: RetentionMarks, events: number): Promise<LinkCheck> {
    const now = this.#now();
    const fresh = events <= (this.#options.freshBelowEvents ??
      FRESH_LINK_CHECK_EVENTS);
    const maxAge = this.#options.maxAgeMs ?? DEFAULT_LINK_CHECK_MAX_AGE_MS;
    let computed = this.#last;
    if (fresh || !computed) computed = await this.#refresh(marks);
    else if (now - computed.at > maxAge) {
      // Answer with what is known, and say how old it is.
      this.#refresh(marks).catch(() => {});
    }
    return {
      ...computed.counts,
      checked_at: new Date(computed.at).toISOString(),
      age_seconds: Math.max(0, Math.round((now - computed.at) / 100) / 10),
    };
  }

  #refresh(marks: RetentionMarks): Promise<Computed> {
    this.#refreshing ??= (async () => {
      const at = this.#now();
      const counts = await linkChecks(this.#db, marks);
      this.#last = { counts, at };
      return this.#last;
    })().finally(() => this.#refreshing = undefined);
    return this.#refreshing;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

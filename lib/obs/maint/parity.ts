/**
 * Parity between canonical source envelopes and the index: every envelope's
 * exact content-free projection (all index columns and resource rows) must
 * equal what is stored, and every index row must have its envelope. Rows that
 * retention or a reviewed source expiry removed on purpose are counted apart,
 * not reported as capture failures. The walk is bounded: a window larger than
 * the page bound fails closed as `incomplete`, never as `ok`.
 *
 * @module
 */

import type { Row } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import { ConfigError } from "../../errors.ts";
import {
  bySeq,
  eventDiff,
  expectedRows,
  RESOURCE_SELECT,
  resourcesEqual,
} from "./_projection.ts";
import {
  readRetentionMarks,
  retainedOut,
  type RetentionMarks,
  STATE_KEYS,
  writeState,
} from "./_state.ts";
import { EVENT_COLUMNS } from "../ingest/mod.ts";
import { ENVELOPE_SELECT, envelopeFromRow } from "./envelopes.ts";
import { requireObs } from "../schema.ts";

/** Rows per page when none is given. */
export const DEFAULT_PARITY_PAGE = 1_000;
/** Pages walked before failing closed, when none is given. */
export const DEFAULT_PARITY_PAGE_BOUND = 100;

/** Outcomes of a parity check: only `ok` passes. */
export const PARITY_STATUSES = ["ok", "mismatch", "incomplete"] as const;
/** One of {@link PARITY_STATUSES}. */
export type ParityStatus = typeof PARITY_STATUSES[number];

/** Content-free reasons a row fails parity. */
export const PARITY_MISMATCH_CODES = [
  "index_missing",
  "index_differs",
  "resources_differ",
  "envelope_missing",
  "envelope_unreadable",
  "envelope_fingerprint",
] as const;
/** One of {@link PARITY_MISMATCH_CODES}. */
export type ParityMismatchCode = typeof PARITY_MISMATCH_CODES[number];

/** Options for {@link parity}. */
export interface ParityOptions {
  /** Rows per page (default 1,000). */
  pageSize?: number;
  /** Pages walked before the check fails closed (default 100). */
  pageBound?: number;
  /** Only this tenant. */
  applicationId?: string;
  /** Most mismatches listed (default 100); the rest are counted. */
  maxReported?: number;
  /**
   * Store a summary of the result for health (default `false`). It is kept
   * per scope: only a check over every tenant sets health's parity status.
   */
  record?: boolean;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
}

/** One row failing parity: its key and which fields differ, never their values. */
export interface ParityMismatch {
  /** The row's key. */
  seq: number;
  /** What is wrong. */
  code: ParityMismatchCode;
  /** For `index_differs`: the fields that differ. */
  fields?: string[];
}

/** Result of a parity check. */
export interface ParityResult {
  /** `ok`, `mismatch`, or `incomplete` when the walk passed its page bound. */
  status: ParityStatus;
  /** The tenant checked, or `null` for every tenant. */
  application_id: string | null;
  /** True only when `status` is `ok`. */
  passed: boolean;
  /** When the check ran, ISO 8601. */
  checked_at: string;
  /** Pages walked. */
  pages: number;
  /** Rows per page. */
  page_size: number;
  /** Pages it could walk before failing closed. */
  page_bound: number;
  /** Envelopes read. */
  envelopes: number;
  /** Index rows read. */
  index_rows: number;
  /** Envelopes whose index rows match exactly. */
  matched: number;
  /** Rows that failed parity. */
  mismatched: number;
  /** Envelopes whose index rows retention removed on purpose. */
  retained_out: number;
  /** Index rows whose envelope a reviewed source expiry removed. */
  source_expired: number;
  /** The failing rows, at most `maxReported`. */
  mismatches: ParityMismatch[];
  /** Failing rows not listed. */
  mismatches_omitted: number;
  /** Where an incomplete walk stopped (the last `seq` checked), else `null`. */
  stopped_after_seq: number | null;
  /**
   * The walk found no envelope and no index row (of its tenant, when it has
   * one): nothing was compared. A tenant check that compared nothing is not
   * recorded for health.
   */
  nothing_checked: boolean;
}

function bounded(
  name: string,
  value: number | undefined,
  fallback: number,
  max: number,
): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new ConfigError(
      `Invalid parity ${name} ${n}: use a whole number from 1 to ${max}`,
    );
  }
  return n;
}

interface Tally {
  envelopes: number;
  indexRows: number;
  matched: number;
  retainedOut: number;
  sourceExpired: number;
  mismatches: ParityMismatch[];
}

/** Compares envelopes and index rows page by page; fails closed past the page bound. */
export async function parity(
  db: TraceDb,
  options: ParityOptions = {},
): Promise<ParityResult> {
  const pageSize = bounded(
    "page size",
    options.pageSize,
    DEFAULT_PARITY_PAGE,
    10_000,
  );
  const pageBound = bounded(
    "page bound",
    options.pageBound,
    DEFAULT_PARITY_PAGE_BOUND,
    100_000,
  );
  const maxReported = options.maxReported ?? 100;
  const now = options.now ?? Date.now;
  await requireObs(db);
  const marks = await readRetentionMarks(db);
  const tally: Tally = {
    envelopes: 0,
    indexRows: 0,
    matched: 0,
    retainedOut: 0,
    sourceExpired: 0,
    mismatches: [],
  };
  let after = 0;
  let pages = 0;
  let finished = false;
  while (pages < pageBound) {
    const next = await checkPage(
      db,
      after,
      pageSize,
      options.applicationId,
      marks,
      tally,
    );
    pages++;
    if (next === null) {
      finished = true;
      break;
    }
    after = next;
  }
  // Exactly at the bound: finished only if nothing is left beyond the last key.
  if (!finished) finished = !(await anyAfter(db, after, options.applicationId));
  tally.mismatches.sort((a, b) =>
    a.seq - b.seq || a.code.localeCompare(b.code)
  );
  const status: ParityStatus = !finished
    ? "incomplete"
    : tally.mismatches.length > 0
    ? "mismatch"
    : "ok";
  const result: ParityResult = {
    status,
    application_id: options.applicationId ?? null,
    passed: status === "ok",
    checked_at: new Date(now()).toISOString(),
    pages,
    page_size: pageSize,
    page_bound: pageBound,
    envelopes: tally.envelopes,
    index_rows: tally.indexRows,
    matched: tally.matched,
    mismatched: tally.mismatches.length,
    retained_out: tally.retainedOut,
    source_expired: tally.sourceExpired,
    mismatches: tally.mismatches.slice(0, maxReported),
    mismatches_omitted: Math.max(0, tally.mismatches.length - maxReported),
    stopped_after_seq: finished ? null : after,
    nothing_checked: finished && tally.envelopes === 0 &&
      tally.indexRows === 0,
  };
  // Health lists each tenant's last check; an "ok" for a tenant the index
  // does not hold (a mistyped id) would vouch for nothing and crowd out the
  // tenants it does hold.
  const vouches = !result.nothing_checked ||
    options.applicationId === undefined;
  if (options.record && vouches) {
    await recordParity(db, result, options.applicationId ?? null, now());
  }
  return result;
}

/** Summary of one recorded parity check, as health reads it. */
export interface RecordedParity {
  /** The check's status. */
  status: ParityStatus;
  /** When it ran, ISO 8601. */
  checked_at: string;
  /** The tenant checked, or `null` for a check over every tenant. */
  application_id: string | null;
  /** Envelopes it read. */
  envelopes: number;
  /** Rows that failed. */
  mismatched: number;
}

/** The recorded parity checks: the last one over every tenant, and the last per tenant. */
export interface RecordedParityChecks {
  /** Only this result speaks for the whole index; `null` until one ran. */
  unscoped: RecordedParity | null;
  /** Last check of each tenant checked alone, by `application_id`. */
  scoped: RecordedParity[];
}

/** Most per-tenant results read back. */
const MAX_SCOPED_READ = 100;

/**
 * Stores the result under its own scope: a check of one tenant never
 * overwrites (so never clears) the result of a check over every tenant.
 */
async function recordParity(
  db: TraceDb,
  result: ParityResult,
  applicationId: string | null,
  now: number,
): Promise<void> {
  const summary: RecordedParity = {
    status: result.status,
    checked_at: result.checked_at,
    application_id: applicationId,
    envelopes: result.envelopes,
    mismatched: result.mismatched,
  };
  const key = applicationId === null
    ? STATE_KEYS.parityLast
    : `${STATE_KEYS.parityTenantPrefix}${applicationId}`;
  await writeState(db, key, summary, now);
}

/** Reads the recorded parity checks, unscoped and per tenant. */
export async function readRecordedParity(
  db: TraceDb,
): Promise<RecordedParityChecks> {
  const prefix = STATE_KEYS.parityTenantPrefix;
  const result = await db.client.execute({
    sql: `SELECT key, value FROM obs_state
          WHERE key = ? OR substr(key, 1, ?) = ?
          ORDER BY key LIMIT ?`,
    args: [STATE_KEYS.parityLast, prefix.length, prefix, MAX_SCOPED_READ + 1],
  });
  let unscoped: RecordedParity | null = null;
  const scoped = new Map<string, RecordedParity>();
  for (const row of result.rows) {
    const recorded = parseRecorded(String(row.value));
    if (!recorded) continue;
    // Before results were kept per scope, a tenant check was stored under the
    // unscoped key; it still speaks only for its tenant.
    const tenant = recorded.application_id;
    if (tenant === null) unscoped = recorded;
    else if ((scoped.get(tenant)?.checked_at ?? "") < recorded.checked_at) {
      scoped.set(tenant, recorded);
    }
  }
  const list = [...scoped.values()]
    .sort((a, b) => a.application_id!.localeCompare(b.application_id!))
    .slice(0, MAX_SCOPED_READ);
  return { unscoped, scoped: list };
}

function parseRecorded(text: string): RecordedParity | null {
  try {
    const value = JSON.parse(text) as Partial<RecordedParity> | null;
    if (
      !value || typeof value !== "object" ||
      !PARITY_STATUSES.includes(value.status as ParityStatus) ||
      typeof value.checked_at !== "string"
    ) {
      return null;
    }
    return {
      status: value.status as ParityStatus,
      checked_at: value.checked_at,
      application_id: typeof value.application_id === "string"
        ? value.application_id
        : null,
      envelopes: Number(value.envelopes ?? 0),
      mismatched: Number(value.mismatched ?? 0),
    };
  } catch {
    return null;
  }
}

// Pages walk `seq` in order, and the queries below read each table NOT
// INDEXED: the planner stays on the key (a range scan), where a tenant's
// index would read and sort all of the tenant's rows for every page.
function tenantClause(applicationId: string | undefined): string {
  return applicationId === undefined ? "" : " AND application_id = ?";
}

function tenantArgs(applicationId: string | undefined): string[] {
  return applicationId === undefined ? [] : [applicationId];
}

async function anyAfter(
  db: TraceDb,
  after: number,
  tenant: string | undefined,
): Promise<boolean> {
  const where = `seq > ?${tenantClause(tenant)}`;
  const result = await db.client.execute({
    sql: `SELECT EXISTS (SELECT 1 FROM obs_envelopes NOT INDEXED WHERE ${where})
            OR EXISTS (SELECT 1 FROM obs_events NOT INDEXED WHERE ${where}) AS more`,
    args: [after, ...tenantArgs(tenant), after, ...tenantArgs(tenant)],
  });
  return Number(result.rows[0]?.more ?? 0) === 1;
}

/**
 * Checks the keys after `after` up to the smaller of the two tables' page
 * ends, so both sides cover the same key range. Returns the last key checked,
 * or `null` when both tables are exhausted.
 */
async function checkPage(
  db: TraceDb,
  after: number,
  pageSize: number,
  tenant: string | undefined,
  marks: RetentionMarks,
  tally: Tally,
): Promise<number | null> {
  const where = `seq > ?${tenantClause(tenant)}`;
  const args = [after, ...tenantArgs(tenant), pageSize];
  const [envelopes, events] = await db.client.batch([
    {
      sql:
        `SELECT ${ENVELOPE_SELECT} FROM obs_envelopes NOT INDEXED WHERE ${where} ORDER BY seq LIMIT ?`,
      args,
    },
    {
      sql: `SELECT ${
        EVENT_COLUMNS.join(", ")
      } FROM obs_events NOT INDEXED WHERE ${where} ORDER BY seq LIMIT ?`,
      args,
    },
  ], "read");
  const envRows = envelopes!.rows;
  const eventRows = events!.rows;
  const ends = [envRows, eventRows]
    .filter((rows) => rows.length === pageSize)
    .map((rows) => Number(rows.at(-1)!.seq));
  const hi = ends.length > 0 ? Math.min(...ends) : Number.MAX_SAFE_INTEGER;
  const inRange = (row: Row) => Number(row.seq) <= hi;
  const pageEnvelopes = envRows.filter(inRange);
  const pageEvents = eventRows.filter(inRange);
  await comparePage(db, pageEnvelopes, pageEvents, marks, tally);
  return ends.length > 0 ? hi : null;
}

async function comparePage(
  db: TraceDb,
  envRows: Row[],
  eventRows: Row[],
  marks: RetentionMarks,
  tally: Tally,
): Promise<void> {
  tally.envelopes += envRows.length;
  tally.indexRows += eventRows.length;
  const events = new Map(eventRows.map((row) => [Number(row.seq), row]));
  const seqs = JSON.stringify(eventRows.map((row) => Number(row.seq)));
  const [resources, grants] = await db.client.batch([
    {
      sql: `SELECT ${RESOURCE_SELECT} FROM obs_resources
            WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq, ordinal`,
      args: [seqs],
    },
    {
      sql: `SELECT g.seq, g.fingerprint FROM obs_expiry_grants g
            WHERE g.seq IN (SELECT value FROM json_each(?))`,
      args: [seqs],
    },
  ], "read");
  const refs = bySeq(resources!.rows);
  const granted = new Map(
    grants!.rows.map((row) => [Number(row.seq), String(row.fingerprint)]),
  );
  for (const envelope of envRows.map(envelopeFromRow)) {
    const row = events.get(envelope.seq);
    events.delete(envelope.seq);
    const expected = expectedRows(envelope);
    if (typeof expected === "string") {
      tally.mismatches.push({ seq: envelope.seq, code: expected });
    } else if (!row) {
      if (
        retainedOut(
          marks,
          expected.ts,
          expected.meta.outcome?.verified === true,
        )
      ) {
        tally.retainedOut++;
      } else {
        tally.mismatches.push({ seq: envelope.seq, code: "index_missing" });
      }
    } else {
      const fields = eventDiff(expected, row);
      if (fields.length > 0) {
        tally.mismatches.push({
          seq: envelope.seq,
          code: "index_differs",
          fields,
        });
      } else if (!resourcesEqual(expected, refs.get(envelope.seq) ?? [])) {
        tally.mismatches.push({ seq: envelope.seq, code: "resources_differ" });
      } else {
        tally.matched++;
      }
    }
  }
  // Index rows left over have no envelope in this range.
  for (const [seq, row] of events) {
    if (granted.get(seq) === String(row.fingerprint)) tally.sourceExpired++;
    else tally.mismatches.push({ seq, code: "envelope_missing" });
  }
}

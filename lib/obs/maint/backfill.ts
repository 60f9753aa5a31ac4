/**
 * Rebuilds index rows from canonical source envelopes, one cursor page per
 * call. Envelopes are only read, never rewritten. A dry run (the default)
 * reports what a real run would insert or correct and writes nothing.
 * Envelopes whose index rows retention already removed are skipped, so a
 * rebuild does not bring expired telemetry back unless asked to.
 *
 * @module
 */

import type { InStatement, Row } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import { ConfigError, errorMessage } from "../../errors.ts";
import {
  bySeq,
  eventDiff,
  type ExpectedRows,
  expectedRows,
  RESOURCE_SELECT,
  resourcesEqual,
} from "./_projection.ts";
import { readRetentionMarks, retainedOut } from "./_state.ts";
import { ENVELOPE_SELECT, envelopeFromRow } from "./envelopes.ts";
import { incrementCounter } from "../counters.ts";
import {
  EVENT_COLUMNS,
  indexStatements,
  RESOURCE_COLUMNS,
  RowCounts,
} from "../ingest/mod.ts";
import { requireObs } from "../schema.ts";

/** Envelopes per page when none is given. */
export const DEFAULT_BACKFILL_PAGE = 500;
/** Largest page a backfill may ask for. */
export const MAX_BACKFILL_PAGE = 5_000;

/** Content-free reasons an envelope could not be indexed. */
export const BACKFILL_ISSUE_CODES = [
  "envelope_unreadable",
  "envelope_fingerprint",
  "event_id_owned",
  "write_failed",
] as const;
/** One of {@link BACKFILL_ISSUE_CODES}. */
export type BackfillIssueCode = typeof BACKFILL_ISSUE_CODES[number];

/** Options for {@link backfill}. */
export interface BackfillOptions {
  /** Report only (default `true`). */
  dryRun?: boolean;
  /** Envelopes per page (default 500, at most 5,000). */
  pageSize?: number;
  /** `next_cursor` of the previous page; absent to start at the oldest envelope. */
  cursor?: string | null;
  /** Only envelopes of this tenant. */
  applicationId?: string;
  /** Also rebuild rows that retention already removed (default `false`). */
  includeRetained?: boolean;
}

/** An envelope that could not be indexed. */
export interface BackfillIssue {
  /** The envelope's key. */
  seq: number;
  /** Why it could not be indexed. */
  code: BackfillIssueCode;
}

/** What one backfill page found and did. */
export interface BackfillResult {
  /** True when nothing was written. */
  dry_run: boolean;
  /** Envelopes read on this page. */
  scanned: number;
  /** Envelopes whose index rows already match. */
  unchanged: number;
  /** Envelopes without index rows (inserted, or would be on a dry run). */
  missing: number;
  /** Envelopes whose index rows differ (corrected, or would be on a dry run). */
  changed: number;
  /** Envelopes whose rows retention removed, left alone. */
  skipped_retained: number;
  /** Envelopes whose rows were written by this call (0 on a dry run). */
  written: number;
  /** Envelopes that could not be indexed, and why. */
  failed: BackfillIssue[];
  /**
   * Why the page's write failed (its envelopes are then `write_failed`):
   * the database's one-line message, which names tables and constraints,
   * never a stored value; `null` when it did not fail.
   */
  write_error: string | null;
  /** Pass back as `cursor` for the next page; `null` after the newest envelope. */
  next_cursor: string | null;
}

const CURSOR = /^bf1\.(\d{1,15})$/;

function decodeBackfillCursor(cursor: string | null | undefined): number {
  if (cursor === undefined || cursor === null) return 0;
  const match = CURSOR.exec(cursor);
  if (!match) {
    throw new ConfigError(
      "Invalid backfill cursor: not a cursor issued by backfill; omit it to start again",
    );
  }
  return Number(match[1]);
}

function pageSizeOf(value: number | undefined): number {
  const size = value ?? DEFAULT_BACKFILL_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BACKFILL_PAGE) {
    throw new ConfigError(
      `Invalid backfill page size ${size}: use a whole number from 1 to ${MAX_BACKFILL_PAGE}`,
    );
  }
  return size;
}

interface PagePlan {
  missing: { seq: number; expected: ExpectedRows }[];
  changed: { seq: number; expected: ExpectedRows }[];
  unchanged: number;
  skippedRetained: number;
  failed: BackfillIssue[];
}

/** Rebuilds (or on a dry run, inspects) the index rows of one page of envelopes. */
export async function backfill(
  db: TraceDb,
  options: BackfillOptions = {},
): Promise<BackfillResult> {
  const after = decodeBackfillCursor(options.cursor);
  const pageSize = pageSizeOf(options.pageSize);
  const dryRun = options.dryRun ?? true;
  await requireObs(db);
  const tenant = options.applicationId;
  // NOT INDEXED: pages follow the key, where a tenant's index would read and
  // sort all of the tenant's envelopes for every page.
  const envelopes = await db.client.execute({
    sql: `SELECT ${ENVELOPE_SELECT} FROM obs_envelopes NOT INDEXED
          WHERE seq > ?${tenant === undefined ? "" : " AND application_id = ?"}
          ORDER BY seq LIMIT ?`,
    args: tenant === undefined
      ? [after, pageSize + 1]
      : [after, tenant, pageSize + 1],
  });
  const page = envelopes.rows.slice(0, pageSize);
  const includeRetained = options.includeRetained ?? false;
  let plan = await planPage(db, page, includeRetained);
  let outcome = await writePlanned(db, plan, dryRun);
  if (outcome.error !== null) {
    // Another backfill or an ingest may have written rows of this page since
    // it was read, and the page's inserts then collide with them: read it
    // again and write what is still missing, once.
    plan = await planPage(db, page, includeRetained);
    outcome = await writePlanned(db, plan, dryRun);
  }
  const { written, error: writeError } = outcome;
  if (writeError !== null) markWriteFailed(plan);
  const last = page.at(-1);
  return {
    dry_run: dryRun,
    scanned: page.length,
    unchanged: plan.unchanged,
    missing: plan.missing.length,
    changed: plan.changed.length,
    skipped_retained: plan.skippedRetained,
    written,
    failed: plan.failed,
    write_error: writeError,
    next_cursor: envelopes.rows.length > pageSize && last
      ? `bf1.${Number(last.seq)}`
      : null,
  };
}

async function planPage(
  db: TraceDb,
  page: Row[],
  includeRetained: boolean,
): Promise<PagePlan> {
  const plan: PagePlan = {
    missing: [],
    changed: [],
    unchanged: 0,
    skippedRetained: 0,
    failed: [],
  };
  if (page.length === 0) return plan;
  const seqs = JSON.stringify(page.map((row) => Number(row.seq)));
  const [events, resources] = await db.client.batch([
    {
      sql: `SELECT ${EVENT_COLUMNS.join(", ")} FROM obs_events
            WHERE seq IN (SELECT value FROM json_each(?))`,
      args: [seqs],
    },
    {
      sql: `SELECT ${RESOURCE_SELECT} FROM obs_resources
            WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq, ordinal`,
      args: [seqs],
    },
  ], "read");
  const rows = new Map(events!.rows.map((row) => [Number(row.seq), row]));
  const refs = bySeq(resources!.rows);
  const marks = await readRetentionMarks(db);
  for (const envelope of page.map(envelopeFromRow)) {
    const expected = expectedRows(envelope);
    if (typeof expected === "string") {
      plan.failed.push({ seq: envelope.seq, code: expected });
      continue;
    }
    const row = rows.get(envelope.seq);
    if (!row) {
      const verified = expected.meta.outcome?.verified === true;
      if (!includeRetained && retainedOut(marks, expected.ts, verified)) {
        plan.skippedRetained++;
      } else plan.missing.push({ seq: envelope.seq, expected });
    } else if (
      eventDiff(expected, row).length > 0 ||
      !resourcesEqual(expected, refs.get(envelope.seq) ?? [])
    ) {
      plan.changed.push({ seq: envelope.seq, expected });
    } else {
      plan.unchanged++;
    }
  }
  await refuseOwnedElsewhere(db, plan);
  return plan;
}

/** An event id already indexed under another `seq` cannot get a second row. */
async function refuseOwnedElsewhere(
  db: TraceDb,
  plan: PagePlan,
): Promise<void> {
  if (plan.missing.length === 0) return;
  const keys = plan.missing.map(({ expected }) => [
    expected.meta.application_id,
    expected.meta.event_id,
  ]);
  const result = await db.client.execute({
    sql: `SELECT application_id, event_id FROM obs_events
          WHERE (application_id, event_id) IN (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(?))`,
    args: [JSON.stringify(keys)],
  });
  if (result.rows.length === 0) return;
  const owned = new Set(
    result.rows.map((row) => `${row.application_id}\u0000${row.event_id}`),
  );
  plan.missing = plan.missing.filter(({ seq, expected }) => {
    const key =
      `${expected.meta.application_id}\u0000${expected.meta.event_id}`;
    if (!owned.has(key)) return true;
    plan.failed.push({ seq, code: "event_id_owned" });
    return false;
  });
}

/** Writes what `plan` found missing or changed, unless on a dry run. */
async function writePlanned(
  db: TraceDb,
  plan: PagePlan,
  dryRun: boolean,
): Promise<{ written: number; error: string | null }> {
  return !dryRun && plan.missing.length + plan.changed.length > 0
    ? await writePage(db, plan)
    : { written: 0, error: null };
}

/** Counts a page whose write was refused and marks its envelopes `write_failed`. */
function markWriteFailed(plan: PagePlan): void {
  incrementCounter("write_failures");
  for (const { seq } of [...plan.missing, ...plan.changed]) {
    plan.failed.push({ seq, code: "write_failed" });
  }
  plan.failed.sort((a, b) => a.seq - b.seq);
}

/** Writes the page in one transaction; a refused write says why. */
async function writePage(
  db: TraceDb,
  plan: PagePlan,
): Promise<{ written: number; error: string | null }> {
  const statements: InStatement[] = indexStatements(
    plan.missing.map(({ seq, expected }) => ({
      seq,
      received_at: Number(expected.event[EVENT_COLUMNS.indexOf("received_at")]),
      fingerprint: String(expected.event[EVENT_COLUMNS.indexOf("fingerprint")]),
      meta: expected.meta,
    })),
  );
  for (const { seq, expected } of plan.changed) {
    statements.push(...correction(seq, expected));
  }
  const counted = insertedCounts(plan);
  if (counted) statements.push(counted);
  try {
    await db.client.batch(statements, "write");
    return { written: plan.missing.length + plan.changed.length, error: null };
  } catch (error) {
    return { written: 0, error: errorMessage(error) };
  }
}

/**
 * What the page's inserts add to `obs_counts`: index rows of the missing
 * envelopes, and resource refs of those and of the corrected ones (whose
 * old refs the delete triggers uncount).
 */
function insertedCounts(plan: PagePlan): InStatement | null {
  const counts = new RowCounts();
  counts.add([
    {
      table: "obs_events",
      columns: EVENT_COLUMNS,
      rows: plan.missing.map(({ expected }) => expected.event),
    },
    {
      table: "obs_resources",
      columns: RESOURCE_COLUMNS,
      rows: [...plan.missing, ...plan.changed].flatMap(({ expected }) =>
        expected.resources
      ),
    },
  ]);
  return counts.statement();
}

/** Rewrites a differing index row in place: previews keyed by the row stay attached. */
function correction(seq: number, expected: ExpectedRows): InStatement[] {
  const columns = EVENT_COLUMNS.filter((column) => column !== "seq");
  const values = columns.map((column) =>
    expected.event[EVENT_COLUMNS.indexOf(column)] ?? null
  );
  const resourceInsert = expected.statements.find((s) =>
    typeof s !== "string" && s.sql.startsWith("INSERT INTO obs_resources ")
  );
  return [
    {
      sql: `UPDATE obs_events SET ${
        columns.map((c) => `${c} = ?`).join(", ")
      } WHERE seq = ?`,
      args: [...values, seq],
    },
    { sql: "DELETE FROM obs_resources WHERE seq = ?", args: [seq] },
    ...(resourceInsert ? [resourceInsert] : []),
  ];
}

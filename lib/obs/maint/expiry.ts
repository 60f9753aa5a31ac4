/**
 * Source expiry: the only way canonical envelopes are deleted. It is a
 * deliberate two-step operation. `planExpiry` (`expiry_plan.ts`) lists the
 * exact envelopes with their fingerprints, and seals the list with a plan
 * fingerprint and a confirmation string. {@link applyExpiry} re-checks every fingerprint, hands
 * the still-matching envelopes to an archive callback that must acknowledge
 * them (exactly `true`, or an {@link ArchiveReceipt} naming where it keeps
 * them), records in one transaction which envelopes that location holds
 * (`obs_archived_envelopes`), and only then compare-and-deletes them in
 * batches: each batch grants the delete for `seq` + fingerprint (the
 * schema's trigger refuses any other delete) and removes only rows whose
 * fingerprint still matches. The record comes before any delete because
 * the archive holds every envelope of the apply from its acknowledgement
 * on: an apply stopped between batches leaves a file holding envelopes
 * that are still in the index, and an erasure of those events must name it
 * too (`_expired_archives.ts`). Reports are content-free:
 * keys, counts and codes only. Index rows and previews are not touched:
 * retention removes them, so an expired event stays queryable through the
 * index until retention runs.
 *
 * @module
 */

import type { Row, Transaction } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import { sha256Hex } from "../../canonical_json.ts";
import {
  ConfigError,
  RefusedError,
  StorageError,
  TraceError,
} from "../../errors.ts";
import { incrementCounter } from "../counters.ts";
import { nextTurn } from "../_turn_line.ts";
import { requireObs } from "../schema.ts";
import {
  deleteGrantedEnvelopes,
  ENVELOPE_SELECT,
  envelopeFromRow,
  type EnvelopeRecord,
} from "./envelopes.ts";
import {
  type ExpiryPlan,
  type ExpiryPlanEntry,
  parseExpiryPlan,
} from "./expiry_plan.ts";

/** Envelopes per delete transaction when none is given. */
export const DEFAULT_EXPIRY_BATCH = 500;

/**
 * Receives the envelopes to delete; must durably keep them, then return
 * exactly `true`, or an {@link ArchiveReceipt} that names where it keeps
 * them (an erasure then names that location).
 */
export type ArchiveCallback = (envelopes: readonly EnvelopeRecord[]) => unknown;

/** An archive's acknowledgement that names where it keeps the envelopes. */
export interface ArchiveReceipt {
  /** Exactly `true`: the envelopes are durably kept. */
  archived: true;
  /**
   * Where: an absolute path, a URL, or another name an operator can find
   * (at most {@link MAX_ARCHIVE_LOCATION} characters, none of them a
   * control character). Never a secret: erasure answers print it.
   */
  location: string;
}

/** Longest archive location an {@link ArchiveReceipt} may name. */
export const MAX_ARCHIVE_LOCATION = 4_096;

/** Options for {@link applyExpiry}. */
export interface ApplyExpiryOptions {
  /** Envelopes per delete transaction (default 500). */
  batchSize?: number;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
  /**
   * Stops the apply before the archive or between batches (each batch is its
   * own transaction, so nothing committed is undone); the result says
   * `interrupted`.
   */
  signal?: AbortSignal;
}

/** Content-free reasons one planned envelope was not deleted. */
export const EXPIRY_REFUSAL_CODES = ["missing", "fingerprint_changed"] as const;
/** One of {@link EXPIRY_REFUSAL_CODES}. */
export type ExpiryRefusalCode = typeof EXPIRY_REFUSAL_CODES[number];

/** A batch that failed part-way; its rows were left as they were. */
export interface ExpiryBatchFailure {
  /** The batch's first envelope. */
  first_seq: number;
  /** Its last envelope. */
  last_seq: number;
  /** Envelopes in the batch. */
  rows: number;
  /** Error class and SQLite code, never the message (it may quote data). */
  error: string;
}

/** Result of applying a plan. */
export interface ExpiryResult {
  /** `applied` when every planned envelope was deleted (an empty plan too), `partial` when some were, `nothing_deleted` otherwise. */
  status: "applied" | "partial" | "nothing_deleted";
  /** The fingerprint of the plan applied. */
  plan_fingerprint: string;
  /** Envelopes the plan listed. */
  planned: number;
  /** Envelopes handed to the archive callback (those still as planned). */
  archived: number;
  /** Envelopes deleted. */
  deleted: number;
  /**
   * Planned envelopes already deleted, as planned, by an earlier granted
   * deletion (an apply of this plan that was interrupted, say): their grant
   * still names the planned fingerprint. Not refused: the plan's intent holds.
   */
  already_deleted: number;
  /** Planned envelopes left alone: gone without a matching grant, or changed since the plan. */
  refused: { seq: number; code: ExpiryRefusalCode }[];
  /** Batches that failed part-way and were left as they were. */
  failed_batches: ExpiryBatchFailure[];
  /** Archived envelopes not attempted after a failed batch or an interrupt. */
  not_attempted: number;
  /**
   * Stopped by its signal before the archive or between batches: the counts
   * are what was done. Applying the same plan again deletes the rest and
   * counts those deleted before as `already_deleted`.
   */
  interrupted: boolean;
}

/**
 * Validates a plan read from outside and the confirmation given for it;
 * returns the plan. {@link applyExpiry} checks the same first; a caller
 * that prepares an archive checks before touching it.
 */
export function checkExpiryConfirmation(
  plan: unknown,
  confirmation: string,
): ExpiryPlan {
  const sealed = parseExpiryPlan(plan);
  // An empty value is usually a variable that did not expand, not a typo.
  if (confirmation === "") {
    throw new RefusedError(
      `Cannot apply the expiry plan: the confirmation given is empty; pass the plan's confirmation exactly: "${sealed.confirmation}"`,
    );
  }
  if (confirmation !== sealed.confirmation) {
    throw new RefusedError(
      `Cannot apply the expiry plan: the confirmation does not match; pass exactly "${sealed.confirmation}"`,
    );
  }
  return sealed;
}

/** Archives and compare-and-deletes the envelopes of a reviewed plan. */
export async function applyExpiry(
  db: TraceDb,
  plan: unknown,
  confirmation: string,
  archive: ArchiveCallback,
  options: ApplyExpiryOptions = {},
): Promise<ExpiryResult> {
  const sealed = checkExpiryConfirmation(plan, confirmation);
  const batchSize = options.batchSize ?? DEFAULT_EXPIRY_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 5_000) {
    throw new ConfigError(
      `Invalid expiry batch size ${batchSize}: use a whole number from 1 to 5000`,
    );
  }
  await requireObs(db);
  const { eligible, refused, alreadyDeleted } = await loadEligible(
    db,
    sealed.entries,
  );
  const result: ExpiryResult = {
    status: "nothing_deleted",
    plan_fingerprint: sealed.fingerprint,
    planned: sealed.entries.length,
    archived: 0,
    deleted: 0,
    already_deleted: alreadyDeleted,
    refused,
    failed_batches: [],
    not_attempted: 0,
    interrupted: false,
  };
  const stopped = (left: number) => {
    if (options.signal?.aborted !== true) return false;
    result.interrupted = true;
    result.not_attempted = left;
    return true;
  };
  const now = (options.now ?? Date.now)();
  // A stop before the archive writes nothing and deletes nothing. Once the
  // archive holds the envelopes, its record is written whatever comes next.
  if (!stopped(0)) {
    const location = await runArchive(archive, eligible);
    await recordArchive(db, location, eligible);
    result.archived = eligible.length;
  }
  for (
    let start = 0;
    !result.interrupted && start < eligible.length;
    start += batchSize
  ) {
    // The database answers without yielding to the event loop: without a
    // turn, a Ctrl-C is not seen until every batch has run.
    await nextTurn();
    if (stopped(eligible.length - start)) break;
    const batch = eligible.slice(start, start + batchSize);
    try {
      await deleteBatch(db, batch, now, result);
    } catch (error) {
      result.failed_batches.push(batchFailure(batch, error));
      result.not_attempted = eligible.length - start - batch.length;
      break;
    }
  }
  result.refused.sort((a, b) => a.seq - b.seq);
  // An empty plan is applied whole: nothing was refused and no batch failed.
  const gone = result.deleted + result.already_deleted;
  result.status = gone === sealed.entries.length
    ? "applied"
    : gone === 0
    ? "nothing_deleted"
    : "partial";
  return result;
}

/** Envelopes whose stored fingerprint and body still match the plan. */
async function loadEligible(db: TraceDb, entries: readonly ExpiryPlanEntry[]) {
  const planned = new Map(entries.map((entry) => [entry.seq, entry]));
  const found = new Map<number, EnvelopeRecord>();
  const seqs = [...planned.keys()];
  const stored = await rowsOfSeqs(
    db,
    `SELECT ${ENVELOPE_SELECT} FROM obs_envelopes
            WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    seqs,
  );
  for (const row of stored) found.set(Number(row.seq), envelopeFromRow(row));
  const granted = await grantsOf(
    db,
    seqs.filter((seq) => !found.has(seq)),
  );
  const eligible: EnvelopeRecord[] = [];
  const refused: ExpiryResult["refused"] = [];
  let alreadyDeleted = 0;
  for (const entry of entries) {
    const envelope = found.get(entry.seq);
    // Envelopes are immutable: a different receipt time means the entry
    // does not describe the stored envelope, so the plan cannot be trusted.
    if (
      envelope && envelope.received_at !== Date.parse(entry.received_at)
    ) {
      throw new RefusedError(
        `Cannot apply the expiry plan: entry seq ${entry.seq} does not describe the stored envelope (received_at differs); create and review a new plan with trace obs expiry-plan`,
      );
    }
    if (!envelope && granted.get(entry.seq) === entry.fingerprint) {
      alreadyDeleted++;
    } else if (!envelope) refused.push({ seq: entry.seq, code: "missing" });
    else if (!matches(envelope, entry)) {
      refused.push({ seq: entry.seq, code: "fingerprint_changed" });
    } else eligible.push(envelope);
  }
  return { eligible, refused, alreadyDeleted };
}

/** The fingerprint each of `seqs` was granted deletion under, for those with a grant. */
async function grantsOf(
  db: TraceDb,
  seqs: readonly number[],
): Promise<Map<number, string>> {
  const rows = await rowsOfSeqs(
    db,
    `SELECT seq, fingerprint FROM obs_expiry_grants
            WHERE seq IN (SELECT value FROM json_each(?))`,
    seqs,
  );
  return new Map(
    rows.map((row) => [Number(row.seq), String(row.fingerprint)]),
  );
}

/** The rows `sql` selects for `seqs` (its one argument, a JSON array), read 1,000 seqs at a time. */
async function rowsOfSeqs(
  db: TraceDb,
  sql: string,
  seqs: readonly number[],
): Promise<Row[]> {
  const rows: Row[] = [];
  for (let start = 0; start < seqs.length; start += 1_000) {
    const result = await db.client.execute({
      sql,
      args: [JSON.stringify(seqs.slice(start, start + 1_000))],
    });
    rows.push(...result.rows);
  }
  return rows;
}

function matches(envelope: EnvelopeRecord, entry: ExpiryPlanEntry): boolean {
  return envelope.fingerprint === entry.fingerprint &&
    sha256Hex(envelope.body) === entry.fingerprint &&
    envelope.application_id === entry.application_id &&
    envelope.event_id === entry.event_id;
}

/** The location recorded for an archive that named none. */
const UNNAMED_ARCHIVE = "";

/** Hands `envelopes` to the archive; returns the location it named, or {@link UNNAMED_ARCHIVE}. */
async function runArchive(
  archive: ArchiveCallback,
  envelopes: EnvelopeRecord[],
): Promise<string> {
  if (envelopes.length === 0) return UNNAMED_ARCHIVE;
  let acknowledged: unknown;
  try {
    acknowledged = await archive(envelopes);
  } catch (error) {
    incrementCounter("callback_failures");
    // Only our own errors are quoted: their messages name paths, never data.
    const detail = error instanceof TraceError
      ? ` (${error.message.split("\n")[0]})`
      : "";
    throw new RefusedError(
      `Cannot apply the expiry plan: the archive callback failed${detail}; nothing was deleted, fix the archive and apply again`,
      { cause: error },
    );
  }
  if (acknowledged === true) return UNNAMED_ARCHIVE;
  if (!isArchiveReceipt(acknowledged)) {
    incrementCounter("callback_failures");
    throw new RefusedError(
      "Cannot apply the expiry plan: the archive did not return exactly true or { archived: true, location }; nothing was deleted, confirm the archive is durable and apply again",
    );
  }
  const { location } = acknowledged;
  if (!isArchiveLocation(location)) {
    incrementCounter("callback_failures");
    throw new RefusedError(
      `Cannot apply the expiry plan: the archive named an unusable location (empty, longer than ${MAX_ARCHIVE_LOCATION} characters or holding a control character); nothing was deleted, name the archive by a printable path or URL and apply again`,
    );
  }
  return location;
}

function isArchiveReceipt(value: unknown): value is ArchiveReceipt {
  if (typeof value !== "object" || value === null) return false;
  const { archived, location } = value as Record<string, unknown>;
  return archived === true && typeof location === "string";
}

// A location is printed on terminals and in JSON: no control characters.
// deno-lint-ignore no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

function isArchiveLocation(location: string): boolean {
  return location.length > 0 && location.length <= MAX_ARCHIVE_LOCATION &&
    !CONTROL_CHARACTER.test(location);
}

/**
 * Records, in one transaction, that the archive at `location` holds
 * `envelopes`. Refused (nothing deleted) when that fails: an archive that
 * holds envelopes no record names is a file an erasure could not name.
 */
async function recordArchive(
  db: TraceDb,
  location: string,
  envelopes: readonly EnvelopeRecord[],
): Promise<void> {
  if (envelopes.length === 0) return;
  try {
    await db.client.execute({
      sql: `INSERT OR IGNORE INTO obs_archived_envelopes (seq, location)
              SELECT value, ? FROM json_each(?)`,
      args: [location, JSON.stringify(envelopes.map((e) => e.seq))],
    });
  } catch (error) {
    const where = location === UNNAMED_ARCHIVE
      ? "the archive's copies"
      : `the archive ${location}`;
    throw new StorageError(
      `Cannot apply the expiry plan: the archive acknowledged ${envelopes.length} envelope${
        envelopes.length === 1 ? "" : "s"
      }, but recording where it keeps them failed (${
        errorCode(error)
      }); nothing was deleted, so the index still holds every one: remove ${where}, then apply again`,
      { cause: error },
    );
  }
}

/** One transaction: re-check, grant, delete exactly the matching rows. */
async function deleteBatch(
  db: TraceDb,
  batch: EnvelopeRecord[],
  now: number,
  result: ExpiryResult,
): Promise<void> {
  let tx: Transaction | undefined;
  try {
    tx = await db.client.transaction("write");
    const current = await tx.execute({
      sql:
        `SELECT seq, fingerprint FROM obs_envelopes WHERE seq IN (SELECT value FROM json_each(?))`,
      args: [JSON.stringify(batch.map((e) => e.seq))],
    });
    const stored = new Map(
      current.rows.map((row) => [Number(row.seq), String(row.fingerprint)]),
    );
    const keep = batch.filter((e) => stored.get(e.seq) === e.fingerprint);
    const pairs = JSON.stringify(keep.map((e) => [e.seq, e.fingerprint]));
    const deleted = await deleteGrantedEnvelopes(tx, pairs, now);
    await tx.commit();
    result.deleted += deleted;
    for (const envelope of batch) {
      if (stored.get(envelope.seq) === envelope.fingerprint) continue;
      result.refused.push({
        seq: envelope.seq,
        code: stored.has(envelope.seq) ? "fingerprint_changed" : "missing",
      });
    }
  } finally {
    tx?.close();
  }
}

function batchFailure(
  batch: EnvelopeRecord[],
  error: unknown,
): ExpiryBatchFailure {
  return {
    first_seq: batch[0]!.seq,
    last_seq: batch.at(-1)!.seq,
    rows: batch.length,
    error: errorCode(error),
  };
}

/** Error class and SQLite code, never the message (it may quote data). */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const name = error instanceof Error ? error.name : "Error";
  return typeof code === "string" ? `${name}:${code}` : name;
}

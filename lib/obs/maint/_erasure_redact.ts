/**
 * What removing a preview while its envelope stays (an erasure of scope
 * `content`, and preview retention) must also take out: every digest of
 * the preview text. An
 * envelope names its preview as `{chars, sha256, truncated}`, a plain
 * SHA-256 of the text, and its fingerprint (in `obs_envelopes`,
 * `obs_events` and the grants of source expiry) is the SHA-256 of that
 * body; a short text could be found again from either by trying guesses.
 * Private to `maint/`.
 *
 * The redaction is the one write besides source expiry that passes the
 * envelopes' guard, and it goes through the same door: a grant for the
 * envelope's `seq` and current fingerprint, the compare-and-delete, then the
 * redacted envelope inserted under the same `seq` (same tenant, id, store,
 * source and receipt time; the preview named as `{chars, erased: true,
 * truncated}`; a new fingerprint), the grants removed. The event's index
 * row takes the new fingerprint. An index row whose envelope a reviewed
 * source expiry removed gets the fingerprint its redacted envelope would
 * have, rebuilt from its metadata, and so does its grant, so parity still
 * counts it as source-expired. It runs inside the transaction that deletes
 * the previews; its count is in an erasure's receipt and in retention's
 * report (`preview_digests`).
 *
 * @module
 */

import { sha256Hex } from "../../canonical_json.ts";
import { StorageError } from "../../errors.ts";
import { EVENT_COLUMNS } from "../ingest/mod.ts";
import {
  erasedEnvelopeBody,
  type EventMetadata,
  redactEnvelopeBody,
} from "../normalize.ts";
import type { StoreName } from "../model.ts";
import {
  deleteGrantedEnvelopes,
  ENVELOPE_SELECT,
  envelopeFromRow,
} from "./envelopes.ts";
import type { ErasureExecutor, SqlCell } from "./erasure_participants.ts";
import { BODY_HOLDS_DIGEST, seqList } from "./_erasure_match.ts";

const IN_LIST = "seq IN (SELECT value FROM json_each(?))";

// Index rows whose envelope is gone and whose preview is still there: their
// fingerprint was made over the preview's digest.
const EXPIRED_WITH_PREVIEW =
  `FROM obs_events e JOIN obs_previews p ON p.seq = e.seq
  WHERE e.${IN_LIST}
    AND NOT EXISTS (SELECT 1 FROM obs_envelopes v WHERE v.seq = e.seq)`;

/** Events among `seqs` whose stored envelope or fingerprint still holds a digest of their preview. */
export async function countPreviewDigests(
  executor: ErasureExecutor,
  seqs: readonly { seq: number }[],
): Promise<number> {
  if (seqs.length === 0) return 0;
  const list = seqList(seqs);
  const result = await executor.execute({
    sql: `SELECT COUNT(*) AS n FROM (
            SELECT seq FROM obs_envelopes WHERE ${IN_LIST} AND ${BODY_HOLDS_DIGEST}
            UNION SELECT e.seq ${EXPIRED_WITH_PREVIEW})`,
    args: [list, list],
  });
  return Number(result.rows[0]?.n ?? 0);
}

/** One event's fingerprint, before and after its preview digest is taken out. */
type Renewal = [seq: number, before: string, after: string];

/**
 * Replaces every preview digest the events of `seqs` hold: envelopes by
 * redacted ones, fingerprints by theirs. Must run before their previews are
 * deleted (an index row without its envelope takes the preview's size from
 * it). Returns the events redacted.
 */
export async function redactPreviewDigests(
  executor: ErasureExecutor,
  seqs: readonly { seq: number }[],
  now: number,
): Promise<number> {
  if (seqs.length === 0) return 0;
  const list = seqList(seqs);
  const envelopes = await redactEnvelopes(executor, list, now);
  const expired = await renewExpiredFingerprints(executor, list);
  return envelopes + expired;
}

async function redactEnvelopes(
  executor: ErasureExecutor,
  list: string,
  now: number,
): Promise<number> {
  const found = await executor.execute({
    sql: `SELECT ${ENVELOPE_SELECT} FROM obs_envelopes
          WHERE ${IN_LIST} AND ${BODY_HOLDS_DIGEST} ORDER BY seq`,
    args: [list],
  });
  if (found.rows.length === 0) return 0;
  const renewals: Renewal[] = [];
  const replacements: unknown[][] = [];
  for (const envelope of found.rows.map(envelopeFromRow)) {
    const body = redactEnvelopeBody(envelope.body);
    if (body === null) continue;
    const fingerprint = sha256Hex(body);
    renewals.push([envelope.seq, envelope.fingerprint, fingerprint]);
    replacements.push([
      envelope.seq,
      envelope.application_id,
      envelope.event_id,
      envelope.store,
      envelope.source,
      fingerprint,
      body,
      envelope.received_at,
    ]);
  }
  if (renewals.length === 0) return 0;
  const pairs = JSON.stringify(renewals.map(([seq, before]) => [seq, before]));
  const seqs = JSON.stringify(renewals.map(([seq]) => seq));
  const deleted = await deleteGrantedEnvelopes(executor, pairs, now);
  if (deleted !== renewals.length) {
    throw new StorageError(
      "Cannot erase: an envelope changed while its preview digest was being redacted; nothing was changed",
    );
  }
  await executor.execute({
    sql:
      `INSERT INTO obs_envelopes (seq, application_id, event_id, store, source, fingerprint, body, received_at)
          SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
            json_extract(value, '$[2]'), json_extract(value, '$[3]'),
            json_extract(value, '$[4]'), json_extract(value, '$[5]'),
            json_extract(value, '$[6]'), json_extract(value, '$[7]')
          FROM json_each(?)`,
    args: [JSON.stringify(replacements)],
  });
  // A grant names the old fingerprint: it goes, as after an erasure's delete.
  await executor.execute({
    sql: `DELETE FROM obs_expiry_grants WHERE ${IN_LIST}`,
    args: [seqs],
  });
  // The delete trigger uncounted the envelopes; inserts are counted by their writer.
  await executor.execute({
    sql: `INSERT INTO obs_counts (key, n) VALUES ('envelopes', ?)
          ON CONFLICT (key) DO UPDATE SET n = n + excluded.n`,
    args: [renewals.length],
  });
  await renewFingerprints(executor, "obs_events", renewals);
  return renewals.length;
}

/** Index rows without an envelope: the fingerprint their redacted envelope would have, for them and their grant. */
async function renewExpiredFingerprints(
  executor: ErasureExecutor,
  list: string,
): Promise<number> {
  const found = await executor.execute({
    sql: `SELECT ${
      EVENT_COLUMNS.map((c) => `e.${c}`).join(", ")
    }, p.chars AS preview_chars, p.truncated AS preview_truncated
          ${EXPIRED_WITH_PREVIEW} ORDER BY e.seq`,
    args: [list],
  });
  if (found.rows.length === 0) return 0;
  const renewals: Renewal[] = found.rows.map((row) => [
    Number(row.seq),
    String(row.fingerprint),
    sha256Hex(erasedEnvelopeBody(metadataOfRow(row), {
      chars: Number(row.preview_chars),
      truncated: Number(row.preview_truncated) === 1,
    })),
  ]);
  await renewFingerprints(executor, "obs_events", renewals);
  await renewFingerprints(executor, "obs_expiry_grants", renewals);
  return renewals.length;
}

/** Sets each renewed fingerprint on `table`'s row of that `seq`, where it still holds the old one. */
async function renewFingerprints(
  executor: ErasureExecutor,
  table: "obs_events" | "obs_expiry_grants",
  renewals: readonly Renewal[],
): Promise<void> {
  await executor.execute({
    sql: `UPDATE ${table} SET fingerprint = (
            SELECT json_extract(value, '$[2]') FROM json_each(?1)
            WHERE json_extract(value, '$[0]') = ${table}.seq)
          WHERE (seq, fingerprint) IN (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(?1))`,
    args: [JSON.stringify(renewals)],
  });
}

/** The metadata an index row was written from (the inverse of ingest's row). */
function metadataOfRow(row: Readonly<Record<string, SqlCell>>): EventMetadata {
  const meta = parseMeta(row.meta);
  const text = (column: string) => {
    const value = row[column];
    return value === null || value === undefined ? null : String(value);
  };
  const time = (column: string) => {
    const value = row[column];
    return value === null || value === undefined ? null : Number(value);
  };
  const success = row.success;
  return {
    event_id: String(row.event_id),
    application_id: String(row.application_id),
    user_id: text("user_id"),
    agent_id: text("agent_id"),
    memory_id: text("memory_id"),
    thread_id: text("thread_id"),
    root_trace_id: String(row.root_trace_id),
    turn_id: text("turn_id"),
    run_id: text("run_id"),
    parent_event_id: text("parent_event_id"),
    kind: String(row.kind),
    stage: String(row.stage),
    coverage_profile: text("coverage_profile"),
    status: String(row.status) as EventMetadata["status"],
    tool: text("tool"),
    success: success === null || success === undefined
      ? null
      : Number(success) === 1,
    store: String(row.store) as StoreName,
    started_at: time("started_at"),
    ended_at: time("ended_at"),
    resources: meta.resources ?? [],
    attributes: meta.attributes ?? {},
    selection: meta.selection ?? null,
    outcome: meta.outcome ?? null,
  };
}

function parseMeta(value: unknown): Partial<EventMetadata> {
  try {
    const parsed = JSON.parse(String(value));
    return parsed !== null && typeof parsed === "object" ? parsed : {};
  } catch {
    return {};
  }
}

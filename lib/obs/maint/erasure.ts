/**
 * Subject erasure: Trace forgets a user, the anonymous users, a thread, a
 * memory or a list of events of one application, from every place it keeps
 * them: previews, resource refs (selection candidates and outcome artifacts
 * among them), index rows, source envelopes, and whatever registered
 * participants keep outside the index.
 *
 * It is a reviewed, two-step operation, as source expiry is.
 * {@link planErasure} counts what would go, per table and per store, and
 * seals the exact list of events (each `seq` with its stored fingerprint)
 * and the index's high-water mark into a confirmation value;
 * {@link applyErasure} matches the subject again up to that mark inside its
 * write transaction and refuses unless that value still comes out, so an
 * event the review counted that changed or went since is refused. Events
 * of the subject written after the dry run are not part of what was
 * reviewed: they stay, and the result counts them (`later_events`), so a
 * user whose events keep arriving can still be erased, one reviewed part
 * at a time. Non-interactive callers (propagated deletions, the staging
 * adapter) use {@link eraseNow}, the same steps without the review.
 *
 * Nothing derived is stored apart from these tables: summaries aggregate
 * live in SQL, health keeps counts only and the process counters are
 * content-free.
 *
 * An erasure that removes previews but keeps the envelopes (scope
 * `content`) also takes every digest of those previews out of what stays:
 * each envelope is replaced by a redacted one with a new fingerprint,
 * through the envelopes' compare-and-delete guard (`_erasure_redact.ts`).
 * One of scope `all` leaves a tombstone per event it removed
 * (`../erased_events.ts`), so a resend of the event writes nothing.
 *
 * Envelopes source expiry archived are out of reach: their archives are
 * files no erasure opens. The dry run and the apply name every archive
 * location expiry recorded for the subject's envelopes, removed since or
 * not (`_expired_archives.ts`), so the operator knows which files to clean;
 * an erasure of scope `all` then removes those records with the events.
 *
 * The bytes must leave the file too: the deleting connection runs with
 * `secure_delete` (set and read back inside the transaction, since a pooled
 * client may hand it any connection), and after the commit freed pages are
 * returned in incremental steps and the WAL is checkpointed and truncated
 * (in a server, by its checkpoint worker, which never waits for a reader).
 *
 * @module
 */

import type { InValue, Transaction } from "@libsql/client";
import { canonicalJson, sha256Hex } from "../../canonical_json.ts";
import { secureDeleteIn, type TraceDb } from "../../db.ts";
import { RefusedError, StorageError, TraceError } from "../../errors.ts";
import type { StoreName } from "../model.ts";
import { requireObs } from "../schema.ts";
import {
  erasedEventsByApplication,
  recordTombstones,
} from "../erased_events.ts";
import {
  countStores,
  countTables,
  deleteFrom,
  emptyCounts,
  type ErasureTable,
  type ErasureTableCounts,
  highWaterSeq,
  type MatchedEvent,
  matchSubject,
  SCOPE_TABLES,
} from "./_erasure_match.ts";
import {
  countPreviewDigests,
  redactPreviewDigests,
} from "./_erasure_redact.ts";
import {
  type ErasedEvent,
  type ErasureExecutor,
  type ErasureParticipant,
  erasureParticipants,
  type ErasureScope,
  type ErasureTarget,
} from "./erasure_participants.ts";
import { markErasedParents } from "./erasure_links.ts";
import {
  dropArchiveRecords,
  type ExpiredEnvelopes,
  expiredEnvelopesOf,
  noExpiredEnvelopes,
} from "./_expired_archives.ts";
import {
  nothingMatched,
  nothingToApply,
  unmatchedIds,
} from "./erasure_unmatched.ts";
import {
  erasureKeyId,
  type ErasureSubject,
  subjectDigest,
  type SubjectKind,
} from "./erasure_subject.ts";
import {
  measureStorage,
  reclaimStorageAndWal,
  type StorageReport,
  type WalTruncate,
} from "./_storage.ts";

export {
  ERASURE_TABLES,
  type ErasureTable,
  type ErasureTableCounts,
} from "./_erasure_match.ts";
export {
  type ExpiredArchive,
  type ExpiredEnvelopes,
} from "./_expired_archives.ts";

/** Options every erasure step takes. */
export interface ErasureOptions {
  /** The erasure key (see `erasureKey`): subjects appear only as its digest. */
  key: Uint8Array;
  /** `all` (default) or `content`: previews only, metadata stays. */
  scope?: ErasureScope;
  /** Only events written up to this `seq` (propagation). */
  upToSeq?: number | null;
  /** Participants to involve (default: the registered ones). */
  participants?: readonly ErasureParticipant[];
}

/** What an erasure removes, or would remove: counts only, never ids or text. */
export interface ErasureCounts {
  /** How the subject was selected: a user, the anonymous users, a thread, a memory, or event ids. */
  selector: SubjectKind;
  /** `all`, or `content` (previews only). */
  scope: ErasureScope;
  /** `hmac-sha256:<hex>`: the subject under the erasure key. */
  subject_digest: string;
  /** Which key made the digest (`sha256:` + 16 hex digits of the key's hash). */
  key_id: string;
  /**
   * Only events written up to this `seq`: the index's high-water mark at the
   * dry run for a reviewed erasure, the deletion's own `seq` for a
   * propagated one; `null` for all of them (an erasure without a review).
   */
  up_to_seq: number | null;
  /** Events matched. */
  events: number;
  /**
   * Rows per index table, and `preview_digests`: events whose envelope (or
   * fingerprint) names a digest of a preview this erasure removes while the
   * envelope stays, replaced by a redacted envelope and a new fingerprint.
   */
  tables: ErasureTableCounts;
  /** Events per store. */
  stores: Record<StoreName, number>;
  /** Records per participant. */
  participants: Record<string, number>;
}

/** The dry run: what would go, and the value that applies exactly this. */
export interface ErasurePlan extends ErasureCounts, ExpiredEnvelopes {
  /** Format identifier. */
  schema: "trace.erasure-plan/1";
  /** Always true: nothing was changed. */
  dry_run: true;
  /**
   * Pass it back to {@link applyErasure}: it names the events counted and
   * `up_to_seq`, and changes when one of those events changes or goes
   * (events written later do not change it).
   */
  confirmation: string;
  /**
   * For a subject of event ids, those that match no event of the
   * application in the erasure's scope (ids are compared exactly: a wrong
   * case or a stray space matches nothing); absent for other selectors.
   */
  unmatched_event_ids?: string[];
  /**
   * Of `unmatched_event_ids`, those an earlier erasure of scope `all`
   * removed: the index keeps a tombstone of each (schema version 6 on), so
   * they match no event because they were erased, not because of a typo.
   */
  erased_event_ids?: string[];
}

/** What an applied erasure removed, as its receipt records it. */
export interface ErasureRecord extends ErasureCounts {
  /** When it was applied, ISO 8601. */
  erased_at: string;
  /** True when the deleting connection confirmed `secure_delete`. */
  secure_delete: boolean;
}

/** An applied erasure, and whether its removal reached the file. */
export interface ErasureResult extends ErasureRecord, ExpiredEnvelopes {
  /** Format identifier. */
  schema: "trace.erasure/1";
  /** Always false: this was applied. */
  dry_run: false;
  /** Freed pages returned and the WAL truncated (bytes before and after). */
  storage: StorageReport | null;
  /**
   * True when the rows were zeroed and the WAL fully checkpointed into the
   * file; false when a reader kept the WAL; `null` for a remote database.
   */
  reached_file: boolean | null;
  /**
   * Events of the subject (in the scope) written after `up_to_seq`, which
   * this erasure left in place: for a reviewed erasure, those that arrived
   * after its dry run (run a dry run again to erase them); 0 when
   * `up_to_seq` is `null`.
   */
  later_events: number;
  /**
   * For a subject of event ids, those that matched no event (as in the
   * dry run; an apply where none matched is refused); absent for other
   * selectors. Not in the receipt, which never holds ids.
   */
  unmatched_event_ids?: string[];
}

/** Options for {@link applyErasure} and {@link eraseNow}. */
export interface ApplyErasureOptions extends ErasureOptions {
  /**
   * Runs inside the erasure's write transaction, after the deletes and
   * before the commit (a throw rolls everything back): where a receipt is
   * appended so that erasure and receipt are one atomic write. Trace's own
   * receipts use it; not part of the library surface (it hands out a libSQL
   * transaction).
   *
   * @ignore
   */
  inTransaction?: (tx: Transaction, record: ErasureRecord) => Promise<void>;
  /** Return freed pages and truncate the WAL afterwards (default true). */
  reclaim?: boolean;
  /**
   * How the WAL is truncated around the erasure: whether it completed
   * (default: a checkpoint on `db`'s own connection, which waits for a
   * reader up to the busy timeout). A server passes its background
   * checkpointer's, which never waits: with a reader in the way the erasure
   * answers `reached_file: false` at once, and the checkpointer finishes it.
   *
   * @ignore
   */
  truncate?: WalTruncate | undefined;
  /** Narrows the tables reached; only for demonstrating a defective erasure. */
  tables?: readonly ErasureTable[];
  /**
   * Leave a tombstone per removed event, so a resend of it writes nothing
   * (scope `all`; default true). The staging adapter over the index passes
   * false: its documents are a store's records, which the contract lets a
   * client write again under the same id after a deletion.
   */
  tombstones?: boolean;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
  /**
   * Mark the events of others whose parent this erasure removes, so health
   * does not ask for the parent to be sent again (`erasure_links.ts`).
   */
  markParentLinks?: boolean;
}

/** Remaining traces of a subject after an erasure (verification). */
export interface ErasureRemainder {
  /** Events still matching. */
  events: number;
  /** Rows still matching, per index table; `preview_digests`: events still naming a digest of their preview. */
  tables: ErasureTableCounts;
  /** Records still referring to it, per participant. */
  participants: Record<string, number>;
  /** True when nothing of the subject remains in the scope (up to `upToSeq`). */
  clean: boolean;
  /**
   * Events of the subject in the scope written after `upToSeq`: never part
   * of the erasure, so not part of `clean` (0 when `upToSeq` is `null`).
   */
  later_events: number;
}

interface Selection {
  subject: ErasureSubject;
  scope: ErasureScope;
  upToSeq: number | null;
  digest: string;
  keyId: string;
  participants: readonly ErasureParticipant[];
  tables: readonly ErasureTable[];
  /** Previews go while envelopes stay: their digests must go too. */
  redact: boolean;
}

function select(
  subject: ErasureSubject,
  options: ErasureOptions & { tables?: readonly ErasureTable[] },
): Selection {
  const scope = options.scope ?? "all";
  const allowed = SCOPE_TABLES[scope];
  const tables = options.tables
    ? allowed.filter((t) => options.tables!.includes(t))
    : allowed;
  return {
    subject,
    scope,
    upToSeq: options.upToSeq ?? null,
    digest: subjectDigest(subject, options.key),
    keyId: erasureKeyId(options.key),
    participants: options.participants ?? erasureParticipants(),
    tables,
    redact: tables.includes("obs_previews") &&
      !tables.includes("obs_envelopes"),
  };
}

function targetOf(
  selection: Selection,
  events: readonly MatchedEvent[],
  later: readonly MatchedEvent[],
): ErasureTarget {
  return {
    subject: selection.subject,
    subject_digest: selection.digest,
    scope: selection.scope,
    events: events.map(erasedEvent),
    later_events: later.map(erasedEvent),
  };
}

function erasedEvent(e: MatchedEvent): ErasedEvent {
  return {
    seq: e.seq,
    application_id: e.application_id,
    event_id: e.event_id,
    agent_id: e.agent_id,
    root_trace_id: e.root_trace_id,
    turn_id: e.turn_id,
    run_id: e.run_id,
  };
}

function match(executor: ErasureExecutor, selection: Selection) {
  return matchSubject(executor, selection.subject, {
    scope: selection.scope,
    upToSeq: selection.upToSeq,
  });
}

/** Events the subject has in the scope after `selection`'s bound (none without one). */
async function laterEvents(
  executor: ErasureExecutor,
  selection: Selection,
): Promise<MatchedEvent[]> {
  if (selection.upToSeq === null) return [];
  return await matchSubject(executor, selection.subject, {
    scope: selection.scope,
    upToSeq: null,
    afterSeq: selection.upToSeq,
  });
}

/**
 * `selection` bounded by the index's high-water mark now (and by its own
 * bound): what a dry run reviews. Read it in the snapshot the dry run
 * matches in.
 */
async function pinned(
  executor: ErasureExecutor,
  selection: Selection,
): Promise<Selection> {
  return boundedBy(selection, await highWaterSeq(executor));
}

/** `selection` bounded by `seq` too (by the lower of the two). */
function boundedBy(selection: Selection, seq: number): Selection {
  const upToSeq = selection.upToSeq === null
    ? seq
    : Math.min(selection.upToSeq, seq);
  return { ...selection, upToSeq };
}

/**
 * The sealed value for exactly this subject, scope, bound and list of
 * events: `erase <n> events up to <seq> <seal>`. The bound is written out
 * because applying needs it to match what the dry run saw; the seal covers
 * it, so an edited bound is refused like any other change.
 */
function confirmationFor(
  selection: Selection,
  events: readonly MatchedEvent[],
): string {
  const seal = sha256Hex(canonicalJson({
    v: 2,
    subject: selection.digest,
    scope: selection.scope,
    up_to_seq: selection.upToSeq,
    events: events.map((e) => [e.seq, e.fingerprint]),
  }));
  return `erase ${events.length} events up to ${selection.upToSeq} ${
    seal.slice(0, 16)
  }`;
}

const CONFIRMATION = /^erase \d+ events up to (\d{1,15}) [0-9a-f]{16}$/;

/** The bound a confirmation value names, or `null` when it is not one (an older form, a typo). */
function confirmedBound(confirmation: string): number | null {
  const bound = CONFIRMATION.exec(confirmation)?.[1];
  return bound === undefined ? null : Number(bound);
}

function countsOf(
  selection: Selection,
  events: readonly MatchedEvent[],
  tables: ErasureTableCounts,
  participants: Record<string, number>,
): ErasureCounts {
  return {
    selector: selection.subject.kind,
    scope: selection.scope,
    subject_digest: selection.digest,
    key_id: selection.keyId,
    up_to_seq: selection.upToSeq,
    events: events.length,
    tables,
    stores: countStores(events),
    participants,
  };
}

async function countParticipants(
  executor: ErasureExecutor,
  selection: Selection,
  events: readonly MatchedEvent[],
  later: readonly MatchedEvent[],
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const target = targetOf(selection, events, later);
  for (const participant of selection.participants) {
    counts[participant.name] = await participant.count(executor, target);
  }
  return counts;
}

/** The dry run: counts per table, store and participant, and the confirmation value; changes nothing. */
export async function planErasure(
  db: TraceDb,
  subject: ErasureSubject,
  options: ErasureOptions,
): Promise<ErasurePlan> {
  const { selection, events, tables, participants, expired } = await survey(
    db,
    subject,
    options,
    { pin: true },
  );
  const unmatched = unmatchedOf(subject, events);
  return {
    schema: "trace.erasure-plan/1",
    dry_run: true,
    ...countsOf(selection, events, tables, participants),
    confirmation: confirmationFor(selection, events),
    ...unmatched,
    ...await erasedBefore(db, subject, unmatched.unmatched_event_ids),
    ...expired,
  };
}

/**
 * `erased_event_ids`: of the listed ids no event has, those an earlier
 * erasure left a tombstone of. Nothing for other selectors, or when every
 * id matched.
 */
async function erasedBefore(
  db: TraceDb,
  subject: ErasureSubject,
  unmatched: readonly string[] | undefined,
): Promise<{ erased_event_ids?: string[] }> {
  if (unmatched === undefined) return {};
  if (unmatched.length === 0) return { erased_event_ids: [] };
  const read = async (sql: string, args: InValue[]) =>
    (await db.client.execute({ sql, args })).rows;
  const app = subject.application_id;
  const erased = (await erasedEventsByApplication(
    read,
    new Map([[app, unmatched]]),
  )).get(app);
  return {
    erased_event_ids: unmatched.filter((id) => erased?.has(id) ?? false),
  };
}

/** `unmatched_event_ids` for a subject of event ids; nothing for other selectors. */
function unmatchedOf(
  subject: ErasureSubject,
  events: readonly MatchedEvent[],
): { unmatched_event_ids?: string[] } {
  return subject.kind === "events"
    ? { unmatched_event_ids: unmatchedIds(subject.ids, events) }
    : {};
}

/**
 * What a subject has now, read in one transaction: its events, their rows,
 * its participants' records and how many events came after the bound. With
 * `pin`, only up to the index's high-water mark, and with the envelopes
 * source expiry archived counted (a dry run: the only reader of that count).
 */
async function survey(
  db: TraceDb,
  subject: ErasureSubject,
  options: ErasureOptions,
  how: { pin?: boolean } = {},
): Promise<{
  selection: Selection;
  events: MatchedEvent[];
  tables: ErasureTableCounts;
  participants: Record<string, number>;
  later: number;
  expired: ExpiredEnvelopes;
}> {
  await requireObs(db);
  const tx = await db.client.transaction("read");
  try {
    const selected = select(subject, options);
    const selection = how.pin ? await pinned(tx, selected) : selected;
    const events = await match(tx, selection);
    const tables = await countTables(tx, events, selection.tables);
    if (selection.redact) {
      tables.preview_digests = await countPreviewDigests(tx, events);
    }
    const later = await laterEvents(tx, selection);
    const participants = await countParticipants(
      tx,
      selection,
      events,
      later,
    );
    return {
      selection,
      events,
      tables,
      participants,
      later: later.length,
      expired: how.pin
        ? await expiredEnvelopesOf(tx, events)
        : noExpiredEnvelopes(),
    };
  } finally {
    tx.close();
  }
}

/**
 * Applies an erasure reviewed with {@link planErasure}: the subject's
 * events up to the bound `confirmation` names, refused unless it is
 * exactly what a dry run prints for them now. Events written after that
 * dry run stay; the result counts them (`later_events`).
 */
export async function applyErasure(
  db: TraceDb,
  subject: ErasureSubject,
  confirmation: string,
  options: ApplyErasureOptions,
): Promise<ErasureResult> {
  return await erase(db, subject, confirmation, options);
}

/** Erases at once, without a review step (propagated deletions, the staging adapter). */
export async function eraseNow(
  db: TraceDb,
  subject: ErasureSubject,
  options: ApplyErasureOptions,
): Promise<ErasureResult> {
  return await erase(db, subject, null, options);
}

async function erase(
  db: TraceDb,
  subject: ErasureSubject,
  confirmation: string | null,
  options: ApplyErasureOptions,
): Promise<ErasureResult> {
  await requireObs(db);
  const selection = select(subject, options);
  const reclaim = options.reclaim !== false && db.path !== null && !db.readOnly;
  const truncate = options.truncate;
  const before = reclaim ? await measureStorage(db, { truncate }) : null;
  const { record, later, unmatched, expired } = await eraseInTransaction(
    db,
    selection,
    confirmation,
    options,
  );
  const reclaimed = before
    ? await reclaimStorageAndWal(db, before, { truncate })
    : null;
  return {
    schema: "trace.erasure/1",
    dry_run: false,
    ...record,
    storage: reclaimed?.storage ?? null,
    reached_file: db.path === null
      ? null
      : record.secure_delete && reclaimed?.walTruncated === true,
    later_events: later,
    ...unmatched,
    ...expired,
  };
}

/** `selection` bounded as `confirmation` says the dry run was; refused when it names no bound. */
function confirmedSelection(
  selection: Selection,
  confirmation: string,
): Selection {
  const bound = confirmedBound(confirmation);
  if (bound === null) throw confirmationRefused();
  return boundedBy(selection, bound);
}

async function eraseInTransaction(
  db: TraceDb,
  given: Selection,
  confirmation: string | null,
  options: ApplyErasureOptions,
): Promise<{
  record: ErasureRecord;
  later: number;
  unmatched: { unmatched_event_ids?: string[] };
  expired: ExpiredEnvelopes;
}> {
  const selection = confirmation === null
    ? given
    : confirmedSelection(given, confirmation);
  let tx: Transaction | undefined;
  try {
    tx = await db.client.transaction("write");
    const secure = await secureDeleteIn(tx);
    if (!secure && db.path !== null) {
      throw new StorageError(
        "Cannot erase: the database connection did not accept secure_delete, so freed pages would keep the erased text; nothing was changed",
      );
    }
    const events = await match(tx, selection);
    if (confirmation !== null) {
      requireSomeMatched(selection, events);
      requireConfirmation(confirmation, confirmationFor(selection, events));
    }
    // Read before the erasure's own grants and deletes change them.
    const expired = await expiredEnvelopesOf(tx, events);
    const now = (options.now ?? Date.now)();
    // Read before anything changes: what arrived after the bound stays.
    const later = await laterEvents(tx, selection);
    const participants: Record<string, number> = {};
    const target = targetOf(selection, events, later);
    for (const participant of selection.participants) {
      participants[participant.name] = await participant.erase(tx, target);
    }
    if (options.markParentLinks) await markErasedParents(tx, target);
    const tables = emptyCounts();
    // Before the previews go: an index row without its envelope takes the
    // preview's size from it.
    if (selection.redact) {
      tables.preview_digests = await redactPreviewDigests(tx, events, now);
    }
    for (const table of selection.tables) {
      tables[table] = await deleteFrom(tx, table, events, now);
    }
    // Nothing of these events is left to refuse a resend: their tombstones do.
    if (selection.scope === "all" && options.tombstones !== false) {
      await leaveTombstones(tx, events);
    }
    // The answer named the archives above; their records go with the events.
    if (selection.scope === "all") {
      await dropArchiveRecords(tx, events.map((e) => e.seq));
    }
    const record: ErasureRecord = {
      ...countsOf(selection, events, tables, participants),
      erased_at: new Date(now).toISOString(),
      secure_delete: secure,
    };
    await options.inTransaction?.(tx, record);
    await tx.commit();
    return {
      record,
      later: later.length,
      unmatched: unmatchedOf(selection.subject, events),
      expired,
    };
  } catch (error) {
    await tx?.rollback().catch(() => {});
    if (error instanceof TraceError) throw error;
    throw new StorageError(
      `Cannot erase: ${
        (error as Error).message.split("\n")[0]
      }; nothing was changed`,
      { cause: error },
    );
  } finally {
    tx?.close();
  }
}

/** Records that `events` were erased, in the erasure's transaction `tx` (`../erased_events.ts`). */
async function leaveTombstones(
  tx: Transaction,
  events: readonly MatchedEvent[],
): Promise<void> {
  await recordTombstones(
    async (sql, args) => (await tx.execute({ sql, args })).rows,
    events,
  );
}

/**
 * A reviewed erasure of event ids none of which matches is refused: its
 * receipt of 0 events would pass `--verify`, a typo reading as proof. (A
 * whole subject that matched nothing is a legitimate proof that nothing
 * was held; the staging adapter's deletions, unreviewed, stay idempotent.)
 */
function requireSomeMatched(
  selection: Selection,
  events: readonly MatchedEvent[],
): void {
  if (!nothingToApply(selection.subject, events.length)) return;
  throw nothingMatched(selection.subject, selection.scope);
}

function requireConfirmation(given: string, expected: string): void {
  if (given !== expected) throw confirmationRefused();
}

function confirmationRefused(): RefusedError {
  return new RefusedError(
    "Cannot erase: the confirmation does not match the subject's events now (an event the dry run counted changed or is gone since, or the value was mistyped); run the dry run again and pass the value it prints",
  );
}

/** What remains of a subject in `scope`: zero everywhere once its erasure is complete. */
export async function erasureRemainder(
  db: TraceDb,
  subject: ErasureSubject,
  options: ErasureOptions,
): Promise<ErasureRemainder> {
  const { events, tables, participants, later } = await survey(
    db,
    subject,
    options,
  );
  const left = Object.values(tables).reduce((n, c) => n + c, 0) +
    Object.values(participants).reduce((n, c) => n + c, 0);
  return {
    events: events.length,
    tables,
    participants,
    clean: events.length === 0 && left === 0,
    later_events: later,
  };
}

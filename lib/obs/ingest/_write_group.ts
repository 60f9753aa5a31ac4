/**
 * One write transaction for a group of validated batches: envelopes, index
 * rows, resource refs and previews of every accepted batch, committed
 * together. It runs wherever its {@link WriteHost} says: on the thread that
 * serves requests (`_write.ts`), or on the write thread
 * (`_write_worker.ts`). Private to `ingest/`.
 *
 * Most batches carry only new ids, so the write first assumes that: it
 * plans the group against nothing stored and inserts. The unique indexes
 * on `(application_id, event_id)` of envelopes and index rows refuse any id
 * already stored; the transaction is then rolled back and the group planned
 * again against the owners read from both tables (an index row may outlive
 * its expired envelope and the other way round: both own the id). Either
 * way a group decides exactly as its batches one after the other would.
 * Both attempts read the tombstones of erased events first
 * (`_tombstones.ts`): an erased id has no row left to refuse it.
 *
 * A large group is written in slices of a few hundred events, all inside
 * the one transaction: a host on a thread that serves requests gives way
 * between slices. Readers see none of the rows until the commit, a failure
 * in any slice rolls back them all, and the batches are acknowledged only
 * after the commit.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { NormalizedEvent } from "../normalize.ts";
import {
  EVENT_COLUMNS,
  indexRows,
  PREVIEW_COLUMNS,
  previewRows,
  RESOURCE_COLUMNS,
} from "./index_rows.ts";
import { type InsertedRows, RowCounts } from "./row_counts.ts";
import {
  type BatchPlan,
  type BatchToWrite,
  eventIdsByApplication,
  type Owned,
  ownerKey,
  planGroup,
} from "./_plan.ts";
import { addTombstoned } from "./_tombstones.ts";
import { storedRoots } from "./_roots.ts";
import { ownedRows } from "./_owner_key.ts";
import { inTurn, runAtOnce, runInTurns } from "./_turns.ts";

/** An open write transaction of a group. */
export interface WriteTx {
  /** Rows of one read statement, keyed by column name. */
  rows(sql: string, args: InValue[]): Promise<Record<string, unknown>[]>;
  /** Runs one statement that returns nothing. */
  run(sql: string, args: InValue[]): Promise<void>;
  /** Inserts every table's rows, in order. */
  insert(tables: readonly InsertedRows[]): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** Ends the transaction: rolls back whatever was not committed. */
  close(): void;
}

/** Where a group's transaction runs, and how it shares its thread. */
export interface WriteHost {
  /** Runs one attempt with the process's other writes to the database waiting for it. */
  hold<T>(work: () => Promise<T>): Promise<T>;
  /** Begins the write transaction. */
  begin(): Promise<WriteTx>;
  /** True on a thread that serves requests: planning and inserts give way between slices (`_turns.ts`). */
  givesWay: boolean;
}

/** Runs `steps` to its end, in turns where the host gives way. */
function runSteps<T>(host: WriteHost, steps: Generator<void, T>): Promise<T> {
  return host.givesWay ? runInTurns(steps) : Promise.resolve(runAtOnce(steps));
}

/** Calls `write` for each of `slices` in order, taking turns where the host gives way. */
async function forEachSlice<T>(
  host: WriteHost,
  slices: Iterable<T>,
  write: (slice: T) => Promise<void>,
): Promise<void> {
  if (!host.givesWay) {
    for (const slice of slices) await write(slice);
    return;
  }
  await inTurn(async (turns) => {
    for (const slice of slices) {
      if (turns.due()) await turns.turn();
      await write(slice);
    }
  });
}

const ENVELOPE_COLUMNS = [
  "seq",
  "application_id",
  "event_id",
  "store",
  "source",
  "fingerprint",
  "body",
  "received_at",
] as const;

/** Writes the accepted batches of a group in one transaction; returns every batch's plan. */
export async function writeGroupOn(
  host: WriteHost,
  batches: readonly BatchToWrite[],
): Promise<BatchPlan[]> {
  const optimistic = await attempt(host, batches, null);
  if (optimistic) return optimistic;
  const checked = await attempt(host, batches, (tx) => loadOwned(tx, batches));
  // Owners were read inside the transaction that writes: nothing can race them.
  if (!checked) throw new Error("the write failed after its ownership check");
  return checked;
}

/**
 * Plans the group against the owners `owners` reads (`null`: assume none is
 * stored) and writes it. An assumption that fails (a batch refused, or an
 * insert refused by a unique index) rolls back and returns `null`, so the
 * caller checks ownership instead; any other failure is thrown.
 */
function attempt(
  host: WriteHost,
  batches: readonly BatchToWrite[],
  owners: ((tx: WriteTx) => Promise<Map<string, Owned>>) | null,
): Promise<BatchPlan[] | null> {
  return host.hold(async () => {
    const tx = await host.begin();
    try {
      const owned = owners ? await owners(tx) : new Map<string, Owned>();
      // Even when assuming ids are new: an erased id has no row to refuse it.
      await addTombstoned((sql, args) => tx.rows(sql, args), batches, owned);
      // A child without a root takes its parent's, read in this transaction.
      const roots = await storedRoots(
        (sql, args) => tx.rows(sql, args),
        batches,
      );
      const first = await nextSeq(tx);
      const { plans, nextSeq: after } = await runSteps(
        host,
        planGroup(batches, owned, first, roots),
      );
      const accepted = plans.filter((plan) => plan.conflicts.length === 0);
      // A refusal lists every conflicting item, stored owners included: only a checked plan knows them all.
      if (!owners && accepted.length < plans.length) {
        await tx.rollback();
        return null;
      }
      if (accepted.some((plan) => plan.fresh.length > 0)) {
        try {
          await insertInSlices(host, tx, accepted, after);
        } catch (error) {
          if (owners || !isConstraintError(error)) throw error;
          await tx.rollback();
          return null;
        }
      }
      await tx.commit();
      return plans;
    } finally {
      tx.close();
    }
  });
}

/**
 * Runs the inserts of the accepted batches in the open transaction `tx`,
 * {@link EVENTS_PER_SLICE} events at a time, then records the rows
 * inserted and the next free `seq`.
 */
async function insertInSlices(
  host: WriteHost,
  tx: WriteTx,
  plans: readonly BatchPlan[],
  nextSeqValue: number,
): Promise<void> {
  const counts = new RowCounts();
  await forEachSlice(host, insertSlices(plans), (tables) => {
    counts.add(tables);
    return tx.insert(tables);
  });
  // Inserted rows are counted here, deletes by triggers (`row_counts.ts`).
  const counted = counts.statement();
  if (counted) await tx.run(counted.sql, counted.args);
  await tx.run(
    `INSERT INTO obs_state (key, value, updated_at) VALUES ('next_seq', ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    [String(nextSeqValue), plans[plans.length - 1]!.batch.receivedAt],
  );
}

/** A constraint refused a statement: here, an id the group assumed new is stored. */
function isConstraintError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_CONSTRAINT");
}

/** Events whose rows one slice of {@link insertInSlices} writes. */
export const EVENTS_PER_SLICE = 500;

type FreshRow = { seq: number; event: NormalizedEvent; batch: BatchToWrite };

/** The rows of the accepted batches, a slice at a time, built as they are written. */
function* insertSlices(plans: readonly BatchPlan[]): Generator<InsertedRows[]> {
  const fresh: FreshRow[] = plans.flatMap(({ batch, fresh }) =>
    fresh.map(({ seq, event }) => ({ seq, event, batch }))
  );
  for (let start = 0; start < fresh.length; start += EVENTS_PER_SLICE) {
    yield sliceRows(fresh.slice(start, start + EVENTS_PER_SLICE));
  }
}

/** Envelope, index, resource and preview rows of `fresh`. */
function sliceRows(fresh: readonly FreshRow[]): InsertedRows[] {
  const index = indexRows(fresh.map(({ seq, event, batch }) => ({
    seq,
    received_at: batch.receivedAt,
    fingerprint: event.fingerprint,
    meta: event.meta,
  })));
  const previews = previewRows(
    fresh.flatMap(({ seq, event, batch }) =>
      event.preview
        ? [{ seq, preview: event.preview, created_at: batch.receivedAt }]
        : []
    ),
  );
  return [
    {
      table: "obs_envelopes",
      columns: ENVELOPE_COLUMNS,
      rows: fresh.map(({ seq, event, batch }) =>
        envelopeRow(seq, event, batch)
      ),
    },
    { table: "obs_events", columns: EVENT_COLUMNS, rows: index.events },
    {
      table: "obs_resources",
      columns: RESOURCE_COLUMNS,
      rows: index.resources,
    },
    { table: "obs_previews", columns: PREVIEW_COLUMNS, rows: previews },
  ];
}

function envelopeRow(
  seq: number,
  event: NormalizedEvent,
  batch: BatchToWrite,
): InValue[] {
  return [
    seq,
    event.meta.application_id,
    event.meta.event_id,
    event.meta.store,
    batch.source,
    event.fingerprint,
    event.body,
    batch.receivedAt,
  ];
}

/** Finds which (application, event id) pairs of the group already have an owner. */
async function loadOwned(
  tx: WriteTx,
  batches: readonly BatchToWrite[],
): Promise<Map<string, Owned>> {
  const owned = new Map<string, Owned>();
  for (const [applicationId, ids] of eventIdsByApplication(batches)) {
    const rows = await ownedRows(
      (sql, args) => tx.rows(sql, args),
      applicationId,
      ids,
      { index: "seq, fingerprint", envelope: "seq, fingerprint" },
    );
    for (const row of rows) {
      owned.set(ownerKey(applicationId, String(row.event_id)), {
        seq: Number(row.seq),
        fingerprint: String(row.fingerprint),
      });
    }
  }
  return owned;
}

/** Next free `seq`: never reuses a key, even after expiry removed the newest rows. */
async function nextSeq(tx: WriteTx): Promise<number> {
  const rows = await tx.rows(
    `SELECT MAX(
       COALESCE((SELECT CAST(value AS INTEGER) FROM obs_state WHERE key = 'next_seq'), 1),
       COALESCE((SELECT MAX(seq) FROM obs_envelopes), 0) + 1,
       COALESCE((SELECT MAX(seq) FROM obs_events), 0) + 1
     ) AS next`,
    [],
  );
  return Number(rows[0]?.next ?? 1);
}

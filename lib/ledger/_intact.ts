/**
 * Every read of ledger evidence is checked against the chain, not only
 * against its own payload digest (which anyone who edits a row can
 * recompute).
 *
 * The first read through a database handle walks the whole chain as
 * `ledger verify` does (payload and chain digests, links, head records,
 * target rows) and remembers the chain digest of every row and the verified
 * head. Later reads through the same handle first run one query comparing
 * the entry count, last seq, target count, newest head record, the
 * remembered head row's digest and the database's schema version with what
 * was verified; if the ledger only grew, they walk just the new rows from
 * the remembered head. Each row a reader returns must then recompute to its
 * chain digest and match the digest remembered for its seq, and a payload
 * must hash to its digest: a row edited after it was verified is refused as
 * surely as one edited before. Anything else (a shrunk ledger, a changed
 * head, a changed schema) is walked again from the start, and every row must
 * still have the digest remembered for it.
 *
 * Why the schema version: an edit in place is an UPDATE, a DELETE or an
 * INSERT OR REPLACE, which the ledger's own triggers refuse (`schema.ts`),
 * so another connection has to drop a trigger first, and that changes the
 * schema version every connection reads from the database header. SQLite's
 * `PRAGMA data_version` would see any commit, but only as a counter of the
 * connection that reads it, and libSQL's client lends reads whichever of
 * its pooled connections is idle (and commits this process's own writes on
 * others), so two readings rarely come from the same connection. An editor
 * who bypasses the triggers without a schema change (`writable_schema`,
 * triggers disabled per connection) is caught by judgements: the gate
 * re-walks every row's chained columns and links first
 * ({@link reverifiedChain}).
 *
 * Nothing is remembered outside the process: a new process verifies from
 * the first entry again.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import type { TraceDb } from "../db.ts";
import { LedgerIntegrityError } from "../errors.ts";
import {
  chainDigest,
  GENESIS,
  type LedgerEntry,
  payloadDigest,
  toEntry,
} from "./_entry.ts";
import {
  type ChainPoint,
  checkHeads,
  checkTargets,
  type Executor,
  firstBroken,
  missingTable,
  walkChain,
} from "./_walk.ts";

/** What a handle has verified so far. */
export interface IntactChain {
  entries: number;
  head: ChainPoint | null;
  targets: number;
  lastHeadSeq: number;
  /** The database's schema version when it was verified. */
  schema: number;
  /** Chain digest of every verified row, by seq. */
  digests: Map<number, string>;
}

/** A database handle, or a write transaction opened by the ledger's writer. */
export type LedgerSource = TraceDb | Transaction;

const CHAINS = new WeakMap<TraceDb, IntactChain>();
const TRANSACTIONS = new WeakMap<Transaction, TraceDb>();

/** The refusal every reader gives for a broken ledger. */
export function brokenLedger(seq: number): LedgerIntegrityError {
  return new LedgerIntegrityError(
    `The ledger is broken at entry ${seq}: run trace ledger verify`,
  );
}

/** Lets readers given `tx` share the verified state of `db` (the ledger's writer only). */
export function bindTransaction(tx: Transaction, db: TraceDb): void {
  TRANSACTIONS.set(tx, db);
}

function handleOf(source: LedgerSource): { db: TraceDb; executor: Executor } {
  if ("client" in source) return { db: source, executor: source.client };
  const db = TRANSACTIONS.get(source);
  if (!db) {
    throw new TypeError(
      "Ledger reads inside a transaction go through appendEntries()",
    );
  }
  return { db, executor: source };
}

/**
 * Verifies the ledger up to its newest entry (incrementally after the first
 * time); throws when broken. The checks read one snapshot (a transaction),
 * so an entry another process appends meanwhile is never mistaken for damage.
 */
export async function intactChain(source: LedgerSource): Promise<IntactChain> {
  const { db, executor } = handleOf(source);
  if (executor !== db.client) return await verifyIn(db, executor);
  const tx = await db.client.transaction("deferred");
  try {
    return await verifyIn(db, tx);
  } finally {
    tx.close();
  }
}

async function verifyIn(db: TraceDb, executor: Executor): Promise<IntactChain> {
  const known = CHAINS.get(db);
  const now = await snapshot(executor, known?.head?.seq ?? 0).catch(
    async (error) => {
      const removed = await missingTable(executor);
      if (removed) {
        throw new LedgerIntegrityError(
          `The ledger's table ${removed.entity_id} was removed: run trace ledger verify`,
          { cause: error },
        );
      }
      throw error;
    },
  );
  if (known && unchanged(known, now)) return known;
  const chain = known && grewOnly(known, now)
    ? await extend(executor, known, now.schema)
    : await verifyFromStart(executor, now.schema);
  if (known) requireRemembered(known, chain.digests);
  CHAINS.set(db, chain);
  return chain;
}

interface Snapshot {
  entries: number;
  last: number;
  targets: number;
  lastHeadSeq: number;
  /** The chain digest now stored at the remembered head's seq. */
  atHead: string | null;
  /** The database's schema version (from its header: the same for every connection). */
  schema: number;
}

async function snapshot(
  executor: Executor,
  headSeq: number,
): Promise<Snapshot> {
  const row = (await executor.execute({
    sql: `SELECT
      (SELECT COUNT(*) FROM ledger_entries) AS entries,
      (SELECT COALESCE(MAX(seq), 0) FROM ledger_entries) AS last,
      (SELECT COUNT(*) FROM ledger_targets) AS targets,
      (SELECT COALESCE(MAX(head_seq), 0) FROM ledger_head) AS heads,
      (SELECT chain_digest FROM ledger_entries WHERE seq = ?) AS at_head,
      (SELECT schema_version FROM pragma_schema_version()) AS schema`,
    args: [headSeq],
  })).rows[0]!;
  return {
    entries: Number(row.entries),
    last: Number(row.last),
    targets: Number(row.targets),
    lastHeadSeq: Number(row.heads),
    atHead: row.at_head === null ? null : String(row.at_head),
    schema: Number(row.schema),
  };
}

function unchanged(known: IntactChain, now: Snapshot): boolean {
  return now.entries === known.entries && now.last === (known.head?.seq ?? 0) &&
    now.targets === known.targets && now.lastHeadSeq === known.lastHeadSeq &&
    now.atHead === (known.head?.chain_digest ?? null) &&
    now.schema === known.schema;
}

/** Only appended to: the remembered head is still there, unchanged, rows came after it, and no trigger was dropped meanwhile. */
function grewOnly(known: IntactChain, now: Snapshot): boolean {
  return now.last > (known.head?.seq ?? 0) &&
    now.atHead === (known.head?.chain_digest ?? null) &&
    now.entries > known.entries && now.schema === known.schema;
}

/**
 * Every row verified before must keep the digest it had then: a chain
 * rewritten consistently from some row onwards walks clean, but not past
 * what this handle remembers.
 */
function requireRemembered(
  known: IntactChain,
  digests: ReadonlyMap<number, string>,
): void {
  for (const [seq, digest] of known.digests) {
    if (digests.get(seq) !== digest) throw brokenLedger(seq);
  }
}

async function verifyFromStart(
  executor: Executor,
  schema: number,
): Promise<IntactChain> {
  const chain: IntactChain = {
    entries: 0,
    head: null,
    targets: 0,
    lastHeadSeq: 0,
    schema,
    digests: new Map(),
  };
  return await extend(executor, chain, schema);
}

/** Walks the rows after `chain.head`, then checks counts, head records and targets; a copy on success. */
async function extend(
  executor: Executor,
  chain: IntactChain,
  schema: number,
): Promise<IntactChain> {
  const digests = new Map(chain.digests);
  const walked = await walkChain(executor, chain.head, (entry) => {
    digests.set(entry.seq, entry.chain_digest);
  });
  const entries = chain.entries + walked.count;
  const heads = await checkHeads(
    executor,
    walked.last,
    entries,
    chain.lastHeadSeq,
  );
  const targets = await checkTargets(executor);
  const broken = firstBroken(walked.broken, heads.broken, targets.broken);
  if (broken) throw brokenLedger(broken.seq);
  const { count } = await countRows(executor);
  if (count !== entries) {
    // Rows before the remembered head vanished while others were appended.
    if (chain.head) return await verifyFromStart(executor, schema);
    throw brokenLedger(walked.last?.seq ?? 0);
  }
  return {
    entries,
    head: walked.last,
    targets: targets.count,
    lastHeadSeq: heads.lastHeadSeq,
    schema,
    digests,
  };
}

/**
 * For judgements (the gate): re-walks the chained columns and links of
 * every row this handle verified before, whatever the cheap checks say,
 * then verifies as every read does. An edit made with the database's
 * safety features turned off leaves the schema version alone; it cannot
 * leave every row's chain digest, link and remembered digest alone too.
 * Payloads are not re-read here: a reader checks each payload it returns.
 */
export async function reverifiedChain(db: TraceDb): Promise<IntactChain> {
  const known = CHAINS.get(db);
  if (known) {
    const tx = await db.client.transaction("deferred");
    try {
      await relink(tx, known);
    } finally {
      tx.close();
    }
  }
  return await intactChain(db);
}

/** Every column the chain digest covers, without the payload: for reads that need no payload. */
export const CHAINED_COLUMNS =
  "seq, kind, entity_id, target_id, payload_digest, prev_chain, chain_digest, created_at, chain_version";

/** Checks every row up to the remembered head against its link, its columns and the digest remembered for it. */
async function relink(executor: Executor, known: IntactChain): Promise<void> {
  const upTo = known.head?.seq ?? 0;
  let previous = GENESIS;
  let after = 0;
  let seen = 0;
  for (;;) {
    const page = await executor.execute({
      sql:
        `SELECT ${CHAINED_COLUMNS} FROM ledger_entries WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
      args: [after, upTo, RELINK_PAGE],
    });
    for (const row of page.rows) {
      const entry = toEntry(row);
      const intact = known.digests.get(entry.seq) === entry.chain_digest &&
        entry.prev_chain === previous &&
        recomputed(entry) === entry.chain_digest;
      if (!intact) throw brokenLedger(entry.seq);
      previous = entry.chain_digest;
      after = entry.seq;
      seen++;
    }
    if (page.rows.length < RELINK_PAGE) break;
  }
  if (seen !== known.digests.size) {
    const missing = [...known.digests.keys()].find((seq) => seq > after) ??
      upTo;
    throw brokenLedger(missing);
  }
}

const RELINK_PAGE = 2_000;

/** The chain digest `entry`'s columns give, or `null` for a chain version no build wrote. */
function recomputed(entry: LedgerEntry): string | null {
  try {
    return chainDigest(entry);
  } catch {
    return null;
  }
}

async function countRows(executor: Executor): Promise<{ count: number }> {
  const row = (await executor.execute(
    "SELECT COUNT(*) AS n FROM ledger_entries",
  )).rows[0]!;
  return { count: Number(row.n) };
}

/**
 * Converts rows a reader is about to return and checks each against the
 * verified chain; a row newer than what was verified verifies the new part
 * first. `payload: false` for rows read without their payload.
 */
export async function verifiedEntries(
  source: LedgerSource,
  rows: Record<string, unknown>[],
  options: { payload: boolean } = { payload: true },
): Promise<LedgerEntry[]> {
  let chain = await intactChain(source);
  const entries = rows.map(toEntry);
  if (entries.some((entry) => entry.seq > (chain.head?.seq ?? 0))) {
    chain = await intactChain(source);
  }
  for (const entry of entries) requireIntact(chain, entry, options.payload);
  return entries;
}

function requireIntact(
  chain: IntactChain,
  entry: LedgerEntry,
  withPayload: boolean,
): void {
  const intact = chain.digests.get(entry.seq) === entry.chain_digest &&
    chainDigest(entry) === entry.chain_digest &&
    (!withPayload || payloadDigest(entry.payload) === entry.payload_digest);
  if (!intact) throw brokenLedger(entry.seq);
}

/**
 * Ledger tables. Targets and chained entries are append-only: triggers in the
 * database itself refuse UPDATE, DELETE and an INSERT that would replace a
 * row, so history cannot be rewritten by a careless tool either; a tool that
 * drops the triggers first changes the schema version, which every reader
 * notices (`_intact.ts`), and `ledger verify` names every guard that is gone
 * (`../schema_guards.ts`).
 *
 * @module
 */

import {
  appliedVersions,
  dbLocation,
  type Migration,
  refuseNewerSchema,
  type TraceDb,
} from "../db.ts";
import { StorageError } from "../errors.ts";
import { missingGuardsOf, restoreGuards } from "../schema_guards.ts";

/** Versioned migrations of the `ledger` component. */
export const LEDGER_MIGRATIONS: Migration[] = [
  {
    component: "ledger",
    version: 1,
    name: "targets and chained entries",
    statements: [
      `CREATE TABLE IF NOT EXISTS ledger_targets (
        target_id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        config_json TEXT NOT NULL,
        config_digest TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TRIGGER IF NOT EXISTS ledger_targets_no_update BEFORE UPDATE ON ledger_targets
        BEGIN SELECT RAISE(ABORT, 'ledger targets are immutable'); END`,
      `CREATE TRIGGER IF NOT EXISTS ledger_targets_no_delete BEFORE DELETE ON ledger_targets
        BEGIN SELECT RAISE(ABORT, 'ledger targets are immutable'); END`,
      `CREATE TABLE IF NOT EXISTS ledger_entries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        target_id TEXT,
        payload TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        prev_chain TEXT NOT NULL,
        chain_digest TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (kind, entity_id)
      )`,
      `CREATE INDEX IF NOT EXISTS ledger_entries_target ON ledger_entries (kind, target_id, seq)`,
      `CREATE TRIGGER IF NOT EXISTS ledger_entries_no_update BEFORE UPDATE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END`,
      `CREATE TRIGGER IF NOT EXISTS ledger_entries_no_delete BEFORE DELETE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END`,
    ],
  },
  {
    component: "ledger",
    version: 2,
    name: "chain head records",
    statements: [
      // One head row per append, written in the same transaction as the entry.
      // A removed last entry leaves a head that names it, so `ledger verify`
      // catches truncation of the tail, which the chain alone cannot.
      `CREATE TABLE IF NOT EXISTS ledger_head (
        head_seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entry_seq INTEGER NOT NULL,
        entry_count INTEGER NOT NULL,
        kind TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        chain_digest TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TRIGGER IF NOT EXISTS ledger_head_no_update BEFORE UPDATE ON ledger_head
        BEGIN SELECT RAISE(ABORT, 'ledger head records are append-only'); END`,
      `CREATE TRIGGER IF NOT EXISTS ledger_head_no_delete BEFORE DELETE ON ledger_head
        BEGIN SELECT RAISE(ABORT, 'ledger head records are append-only'); END`,
      // A ledger written before heads existed starts with its current last entry.
      `INSERT INTO ledger_head (entry_seq, entry_count, kind, entity_id, chain_digest, created_at)
        SELECT seq, (SELECT COUNT(*) FROM ledger_entries), kind, entity_id, chain_digest, created_at
        FROM ledger_entries ORDER BY seq DESC LIMIT 1`,
    ],
  },
  {
    component: "ledger",
    version: 3,
    name: "chain digest versions",
    statements: [
      // Existing rows keep version 1 (their digests never covered target_id
      // and created_at); new rows are written with version 2, which does.
      `ALTER TABLE ledger_entries ADD COLUMN chain_version INTEGER NOT NULL DEFAULT 1`,
    ],
  },
  {
    component: "ledger",
    version: 4,
    name: "no rewrite through REPLACE",
    statements: [
      // INSERT OR REPLACE deletes the row it conflicts with without firing
      // DELETE triggers, so it could rewrite an entry in place, silently.
      // An insert may only append: a new seq, a new (kind, entity_id), a new
      // target id. (A seq the database assigns reads as -1 here.)
      `CREATE TRIGGER IF NOT EXISTS ledger_entries_append_only BEFORE INSERT ON ledger_entries
        WHEN (NEW.seq > 0 AND NEW.seq <= (SELECT COALESCE(MAX(seq), 0) FROM ledger_entries))
          OR EXISTS (SELECT 1 FROM ledger_entries WHERE kind = NEW.kind AND entity_id = NEW.entity_id)
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END`,
      `CREATE TRIGGER IF NOT EXISTS ledger_head_append_only BEFORE INSERT ON ledger_head
        WHEN NEW.head_seq > 0 AND NEW.head_seq <= (SELECT COALESCE(MAX(head_seq), 0) FROM ledger_head)
        BEGIN SELECT RAISE(ABORT, 'ledger head records are append-only'); END`,
      `CREATE TRIGGER IF NOT EXISTS ledger_targets_append_only BEFORE INSERT ON ledger_targets
        WHEN EXISTS (SELECT 1 FROM ledger_targets WHERE target_id = NEW.target_id)
        BEGIN SELECT RAISE(ABORT, 'ledger targets are immutable'); END`,
    ],
  },
];

/** Latest ledger schema version this build knows: what writers migrate to. */
export const LEDGER_SCHEMA_VERSION = Math.max(
  ...LEDGER_MIGRATIONS.map((m) => m.version),
);

/**
 * The oldest ledger schema readers can read: version 4 only adds guards
 * against rewriting rows, which a reader does not need, so a ledger no
 * writer has upgraded yet stays readable.
 */
export const LEDGER_READABLE_VERSION = 3;

/** Throws a clear error when the ledger is missing or older than this build (readers never migrate). */
export async function requireLedger(db: TraceDb): Promise<void> {
  refuseUnreadable(db, await ledgerVersion(db));
}

/** Refuses a ledger at `version` that this build cannot read: too old, or newer than it knows. */
function refuseUnreadable(db: TraceDb, version: number): void {
  refuseNewerSchema(db, "ledger", version, LEDGER_SCHEMA_VERSION);
  if (version < LEDGER_READABLE_VERSION) {
    throw new StorageError(
      `Cannot read the ledger in ${
        dbLocation(db)
      }: its schema is at version ${version}, this build needs ${LEDGER_READABLE_VERSION}; run any writing command (e.g. trace external-register) to upgrade it`,
    );
  }
}

/**
 * Throws a clear error when the database holds no ledger at all; an older
 * one passes (a writer upgrades it). Commands that act on evidence already
 * recorded check this before they migrate, so a mistyped data directory
 * gains no tables.
 */
export async function requireExistingLedger(db: TraceDb): Promise<void> {
  await ledgerVersion(db);
}

async function ledgerVersion(db: TraceDb): Promise<number> {
  const version = (await appliedVersions(db)).get("ledger") ?? 0;
  if (version === 0) {
    throw new StorageError(
      `No ledger in ${
        dbLocation(db)
      } yet; register a target with trace external-register or run trace external-run first`,
    );
  }
  return version;
}

/** False for a database never written to; throws like {@link requireLedger} when it is older than this build. */
export async function hasLedger(db: TraceDb): Promise<boolean> {
  const version = (await appliedVersions(db)).get("ledger");
  if (version === undefined) return false;
  refuseUnreadable(db, version);
  return true;
}

/** The ledger's guards (append-only triggers) its applied schema should hold and does not, by name. */
export async function missingLedgerGuards(
  executor: Pick<TraceDb["client"], "execute">,
): Promise<string[]> {
  return await missingGuardsOf(executor, LEDGER_MIGRATIONS, "ledger");
}

/** Re-creates the ledger's missing guards with its migrations' statements; the names restored. */
export async function restoreLedgerGuards(db: TraceDb): Promise<string[]> {
  return await restoreGuards(db, LEDGER_MIGRATIONS, "ledger");
}

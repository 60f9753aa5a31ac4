/**
 * Ledger tables. Targets and chained entries are append-only: triggers in the
 * database itself refuse UPDATE and DELETE, so history cannot be rewritten by
 * a careless tool either.
 *
 * @module
 */

import type { Migration } from "../db.ts";

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
];

/**
 * Tables of operator security (component `auth`), in the data directory's
 * database beside the ledger and the index:
 *
 * - `auth_audit`: the audit trail, append-only and hash-chained with the
 *   ledger's digest functions; triggers refuse UPDATE, DELETE and an INSERT
 *   that would replace an entry (`INSERT OR REPLACE`).
 * - `auth_audit_head`: one head record per append, as the ledger keeps (a
 *   last entry removed alone leaves a head naming it; one removed with its
 *   head record is caught only by a head kept elsewhere, `trace audit head`).
 * - `auth_keys`: the random key of subject digests (user, event, resource
 *   ids are stored keyed, so erasing a subject never rewrites the chain);
 *   triggers refuse changing, deleting or replacing it.
 * - `auth_replay_drafts`: inert replay drafts, reviewable and never edited.
 *
 * @module
 */

import { type Migration, requireSchema, type TraceDb } from "../db.ts";
import { missingGuardsOf, restoreGuards } from "../schema_guards.ts";

/** Component name in `schema_migrations`. */
export const AUTH_COMPONENT = "auth";

const appendOnly = (table: string, what: string) => [
  `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table}
    BEGIN SELECT RAISE(ABORT, '${what} are append-only'); END`,
  `CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table}
    BEGIN SELECT RAISE(ABORT, '${what} are append-only'); END`,
];

/** Versioned migrations of the `auth` component. */
export const AUTH_MIGRATIONS: Migration[] = [
  {
    component: AUTH_COMPONENT,
    version: 1,
    name: "audit trail, subject key and replay drafts",
    statements: [
      `CREATE TABLE auth_audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entry_id TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        operator TEXT NOT NULL,
        action TEXT NOT NULL,
        outcome TEXT NOT NULL,
        payload TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        prev_chain TEXT NOT NULL,
        chain_digest TEXT NOT NULL
      )`,
      "CREATE INDEX auth_audit_operator ON auth_audit (operator, seq)",
      "CREATE INDEX auth_audit_action ON auth_audit (action, seq)",
      ...appendOnly("auth_audit", "audit entries"),
      `CREATE TABLE auth_audit_head (
        head_seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entry_seq INTEGER NOT NULL,
        entry_count INTEGER NOT NULL,
        chain_digest TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      ...appendOnly("auth_audit_head", "audit head records"),
      `CREATE TABLE auth_keys (
        name TEXT PRIMARY KEY,
        secret TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TRIGGER auth_keys_no_update BEFORE UPDATE ON auth_keys
        BEGIN SELECT RAISE(ABORT, 'auth keys are never changed'); END`,
      `CREATE TABLE auth_replay_drafts (
        draft_id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        operator TEXT NOT NULL,
        application_id TEXT NOT NULL,
        payload TEXT NOT NULL,
        payload_digest TEXT NOT NULL
      )`,
      "CREATE INDEX auth_replay_drafts_tenant ON auth_replay_drafts (application_id, created_at)",
      `CREATE TRIGGER auth_replay_drafts_no_update BEFORE UPDATE ON auth_replay_drafts
        BEGIN SELECT RAISE(ABORT, 'replay drafts are never edited'); END`,
    ],
  },
  {
    component: AUTH_COMPONENT,
    version: 2,
    name: "no rewrite through REPLACE, no subject key deleted",
    statements: [
      // INSERT OR REPLACE deletes the row it conflicts with without firing
      // DELETE triggers, so it could rewrite an entry in place, silently. An
      // insert may only append: a new seq and a new entry id (a seq the
      // database assigns reads as -1 here), a new head record.
      `CREATE TRIGGER IF NOT EXISTS auth_audit_append_only BEFORE INSERT ON auth_audit
        WHEN (NEW.seq > 0 AND NEW.seq <= (SELECT COALESCE(MAX(seq), 0) FROM auth_audit))
          OR EXISTS (SELECT 1 FROM auth_audit WHERE entry_id = NEW.entry_id)
        BEGIN SELECT RAISE(ABORT, 'audit entries are append-only'); END`,
      `CREATE TRIGGER IF NOT EXISTS auth_audit_head_append_only BEFORE INSERT ON auth_audit_head
        WHEN NEW.head_seq > 0 AND NEW.head_seq <= (SELECT COALESCE(MAX(head_seq), 0) FROM auth_audit_head)
        BEGIN SELECT RAISE(ABORT, 'audit head records are append-only'); END`,
      // Without its key no stored digest can be matched to a subject again
      // (trace audit list --subject would find nothing): the key is written
      // once and kept, neither deleted nor replaced.
      `CREATE TRIGGER IF NOT EXISTS auth_keys_no_delete BEFORE DELETE ON auth_keys
        BEGIN SELECT RAISE(ABORT, 'auth keys are never changed'); END`,
      `CREATE TRIGGER IF NOT EXISTS auth_keys_append_only BEFORE INSERT ON auth_keys
        WHEN EXISTS (SELECT 1 FROM auth_keys WHERE name = NEW.name)
        BEGIN SELECT RAISE(ABORT, 'auth keys are never changed'); END`,
    ],
  },
];

/** Highest `auth` schema version this build knows. */
const AUTH_SCHEMA_VERSION = Math.max(...AUTH_MIGRATIONS.map((m) => m.version));

/** Throws a clear error when the `auth` tables were never provisioned. */
export async function requireAuthSchema(db: TraceDb): Promise<void> {
  await requireSchema(
    db,
    AUTH_COMPONENT,
    "nothing has been audited here yet (trace serve provisions the audit trail)",
    AUTH_SCHEMA_VERSION,
  );
}

/** The trail's guards (append-only triggers) its applied schema should hold and does not, by name. */
export async function missingAuthGuards(
  executor: Pick<TraceDb["client"], "execute">,
): Promise<string[]> {
  return await missingGuardsOf(executor, AUTH_MIGRATIONS, AUTH_COMPONENT);
}

/** Re-creates the trail's missing guards with its migrations' statements; the names restored. */
export async function restoreAuthGuards(db: TraceDb): Promise<string[]> {
  return await restoreGuards(db, AUTH_MIGRATIONS, AUTH_COMPONENT);
}

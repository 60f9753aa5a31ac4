/**
 * Guards: the triggers a component's migrations create so that the database
 * itself refuses to rewrite its rows (UPDATE, DELETE, INSERT OR REPLACE).
 * Whoever can write the file can drop one with an outside tool; the chain
 * still catches edits made after that, but the tables no longer refuse
 * them, so `verify` names guards that are gone or changed, and restoring
 * them re-runs the very statements the migrations ran.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import type { Migration, TraceDb } from "./db.ts";
import { StorageError } from "./errors.ts";

/** One trigger a migration creates, with the statement that creates it. */
export interface SchemaGuard {
  name: string;
  statement: string;
}

type Executor = Pick<Transaction, "execute">;

const TRIGGER = /^\s*CREATE\s+TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/i;

/** The guards of `component`'s migrations up to `version` (the applied one: a later step's guards are not due yet). */
export function guardsOf(
  migrations: readonly Migration[],
  component: string,
  version: number,
): SchemaGuard[] {
  return migrations
    .filter((m) => m.component === component && m.version <= version)
    .flatMap((m) => m.statements)
    .flatMap((statement) => {
      const name = TRIGGER.exec(statement)?.[1];
      return name ? [{ name, statement }] : [];
    });
}

/** The applied schema version of `component`, read through `executor` (0 when none). */
async function appliedVersionIn(
  executor: Executor,
  component: string,
): Promise<number> {
  const row = (await executor.execute({
    sql:
      "SELECT MAX(version) AS version FROM schema_migrations WHERE component = ?",
    args: [component],
  })).rows[0];
  return Number(row?.version ?? 0);
}

/**
 * The names of the guards `component`'s applied schema should hold and the
 * database lacks, or holds with other SQL than their migration's.
 */
export async function missingGuardsOf(
  executor: Executor,
  migrations: readonly Migration[],
  component: string,
): Promise<string[]> {
  const version = await appliedVersionIn(executor, component);
  return await missingGuards(
    executor,
    guardsOf(migrations, component, version),
  );
}

/**
 * The names of `guards` the database lacks, or holds with other SQL than
 * their migration's (a same-named trigger that refuses nothing is no guard).
 */
async function missingGuards(
  executor: Executor,
  guards: readonly SchemaGuard[],
): Promise<string[]> {
  const present = new Map(
    (await executor.execute(
      "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'",
    )).rows.map((row) => [String(row.name), String(row.sql)]),
  );
  return guards
    .filter((g) => normalised(present.get(g.name)) !== normalised(g.statement))
    .map((g) => g.name);
}

/** SQLite stores a trigger's SQL without `IF NOT EXISTS`; whitespace is no difference. */
function normalised(sql: string | undefined): string | undefined {
  return sql
    ?.replace(/^\s*CREATE\s+TRIGGER\s+IF\s+NOT\s+EXISTS\s+/i, "CREATE TRIGGER ")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Re-creates the missing or changed guards of `component`'s applied schema
 * in one write transaction with their migrations' own statements; returns
 * the names restored. Only adds refusals: no row of its tables is read or
 * written.
 */
export async function restoreGuards(
  db: TraceDb,
  migrations: readonly Migration[],
  component: string,
): Promise<string[]> {
  const tx = await db.client.transaction("write");
  try {
    const version = await appliedVersionIn(tx, component);
    const guards = guardsOf(migrations, component, version);
    const missing = new Set(await missingGuards(tx, guards));
    const restored = guards.filter((g) => missing.has(g.name));
    for (const guard of restored) {
      await tx.execute(`DROP TRIGGER IF EXISTS "${guard.name}"`);
      await tx.execute(guard.statement);
    }
    await tx.commit();
    return restored.map((g) => g.name);
  } catch (error) {
    await tx.rollback().catch(() => {});
    throw new StorageError(
      `Cannot restore the database's guards: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    tx.close();
  }
}

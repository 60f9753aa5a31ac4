/** Shared set-up for commands that touch the data directory and database. */

import { resolveDataDir } from "../lib/data_dir.ts";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import type { CliIo } from "./_io.ts";

/** The data directory and an open database. */
export interface DataContext {
  dataDir: string;
  db: TraceDb;
}

/** `write` migrates every component; `create` (default: `write`) only makes a missing database file. */
export interface ContextOptions {
  write: boolean;
  create?: boolean;
}

/** Opens the data dir and database named by `--data-dir` / `--db`; migrates when `write` is set. */
export async function openDataContext(
  flags: { "data-dir"?: string | undefined; db?: string | undefined },
  io: CliIo,
  options: ContextOptions,
): Promise<DataContext> {
  const dataDir = resolveDataDir({ flag: flags["data-dir"], env: io.env });
  const db = await openDb({
    dataDir,
    url: flags.db ?? io.env("TRACE_DB_URL"),
    authToken: io.env("TRACE_DB_AUTH_TOKEN"),
    create: options.create ?? options.write,
  });
  if (options.write) {
    try {
      await migrate(db, ALL_MIGRATIONS);
    } catch (error) {
      db.close();
      throw error;
    }
  }
  return { dataDir, db };
}

/** Runs `fn` with an open data context, always closing the database. */
export async function withDataContext<T>(
  flags: { "data-dir"?: string | undefined; db?: string | undefined },
  io: CliIo,
  options: ContextOptions,
  fn: (context: DataContext) => Promise<T>,
): Promise<T> {
  const context = await openDataContext(flags, io, options);
  try {
    return await fn(context);
  } finally {
    context.db.close();
  }
}

/** Writes `value` as one line of JSON on stdout. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(JSON.stringify(value) + "\n");
}

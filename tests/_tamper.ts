/** Plain libSQL clients on a test database's file, as an outside tool would open it. */

import { type Client, createClient } from "@libsql/client";
import type { TraceDb } from "../lib/db.ts";

/** Runs `fn` on a plain client of `db`'s file with every trigger in place, closed afterwards. */
export async function withRawClient<T>(
  db: TraceDb,
  fn: (raw: Client) => Promise<T>,
): Promise<T> {
  const raw = createClient({ url: db.url });
  try {
    return await fn(raw);
  } finally {
    raw.close();
  }
}

/** Runs `fn` on a plain client after dropping the append-only triggers of `tables`, as an outside tool could. */
export async function withoutTriggers(
  db: TraceDb,
  tables: readonly string[],
  fn: (raw: Client) => Promise<void>,
): Promise<void> {
  await withRawClient(db, async (raw) => {
    for (const table of tables) {
      await raw.execute(`DROP TRIGGER IF EXISTS ${table}_no_update`);
      await raw.execute(`DROP TRIGGER IF EXISTS ${table}_no_delete`);
    }
    await fn(raw);
  });
}

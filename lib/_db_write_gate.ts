/**
 * Writes to one local database file while a long write transaction is open.
 * The local libSQL client runs SQLite on the calling thread: a second write
 * transaction begun while another connection of the same process holds the
 * write lock waits inside SQLite's busy handler, which sleeps on that very
 * thread, so the first can never finish and both wait out the busy timeout.
 * Ingest keeps its transaction open across turns of the event loop (to let
 * other requests in while a large batch is written) and holds the file's
 * writes meanwhile ({@link holdWrites}); every other write of the process
 * waits for it here ({@link writesAllowed}) instead of in SQLite. Private
 * to `lib/db.ts`.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** Open holds, by file path: settled when the hold ends. */
const held = new Map<string, Promise<void>>();
/** The path whose hold the current async context owns: its own writes go through. */
const holder = new AsyncLocalStorage<string>();

/** Runs `work` with the writes of `path` held: other writes to the file wait until it settles. */
export async function holdWrites<T>(
  path: string,
  work: () => Promise<T>,
): Promise<T> {
  await writesAllowed(path);
  let release = () => {};
  held.set(path, new Promise<void>((resolve) => release = resolve));
  try {
    return await holder.run(path, work);
  } finally {
    held.delete(path);
    release();
  }
}

/** Resolves once no other context holds the writes of `path`. */
export async function writesAllowed(path: string): Promise<void> {
  if (holder.getStore() === path) return;
  for (let hold = held.get(path); hold; hold = held.get(path)) await hold;
}

/** True while a hold on `path` is open (for tests). */
export function writesHeld(path: string): boolean {
  return held.has(path);
}

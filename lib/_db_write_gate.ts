/**
 * Writes to one local database file while a long write transaction is open.
 * The local libSQL client runs SQLite on the calling thread: a second write
 * transaction begun while another connection of the same process holds the
 * write lock waits inside SQLite's busy handler, which sleeps on that very
 * thread, so the first can never finish and both wait out the busy timeout.
 * Ingest keeps its transaction open across turns of the event loop (to let
 * other requests in while a large batch is written) and holds the file's
 * writes meanwhile ({@link holdWrites}); every other write of the process
 * waits for it here ({@link writesAllowed}) instead of in SQLite. A write
 * transaction of the client holds them too ({@link acquireWrites}), so an
 * ingest that begins while one is open waits for its commit here, not in
 * SQLite's busy handler on the thread that commit needs. Private to
 * `lib/db.ts` and its client (`_db_secure_delete.ts`).
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { StorageError } from "./errors.ts";
import { settleWithin } from "./settle_within.ts";

/** Open holds, by file path: settled when the hold ends. */
const held = new Map<string, Promise<void>>();
/** The path whose hold the current async context owns: its own writes go through. */
const holder = new AsyncLocalStorage<string>();

/**
 * Longest one hold is waited for. A hold lasts one transaction (seconds at
 * most): one past this is a write made while its own flow holds a write
 * transaction open, which would wait forever.
 */
const WRITE_WAIT_MS = 60_000;

/** Runs `work` with the writes of `path` held: other writes to the file wait until it settles. */
export async function holdWrites<T>(
  path: string,
  work: () => Promise<T>,
): Promise<T> {
  const release = await acquireWrites(path);
  try {
    return await holder.run(path, work);
  } finally {
    release();
  }
}

/**
 * Holds the writes of `path` until the returned function is called: for a
 * write transaction of the client, open across turns of the event loop,
 * which ingest must wait for outside SQLite as others wait for ingest. In a
 * context that already holds `path` it holds nothing more.
 */
export async function acquireWrites(path: string): Promise<() => void> {
  if (holder.getStore() === path) return () => {};
  let settle = () => {};
  const hold = new Promise<void>((resolve) => settle = resolve);
  await whenFree(path, () => held.set(path, hold));
  return () => {
    if (held.get(path) === hold) held.delete(path);
    settle();
  };
}

/** Resolves once no other context holds the writes of `path`. */
export async function writesAllowed(path: string): Promise<void> {
  if (holder.getStore() === path) return;
  await whenFree(path, () => {});
}

/**
 * Waits until no hold on `path` is open, then runs `claim` in the same
 * turn: waiters woken by one release would otherwise all find the file
 * free before the first of them claims it.
 */
async function whenFree(path: string, claim: () => void): Promise<void> {
  for (let hold = held.get(path); hold; hold = held.get(path)) {
    // One hold lasting past WRITE_WAIT_MS fails the wait.
    await settleWithin(hold, WRITE_WAIT_MS, () => {
      throw waitedTooLong(path);
    });
  }
  claim();
}

function waitedTooLong(path: string): StorageError {
  return new StorageError(
    `Cannot write to ${path}: another write of this process has held it for ${
      WRITE_WAIT_MS / 1000
    } s; a write made while a write transaction is open must go through that transaction`,
  );
}

/** True while a hold on `path` is open (for tests). */
export function writesHeld(path: string): boolean {
  return held.has(path);
}

/**
 * Tombstones of erased events: an erasure of scope `all` deletes an event's
 * envelope and index rows, and so the record that its id was ever taken. A
 * producer that sends the event again (an outbox retry, a replayed file)
 * would have it stored again as new. So the erasure leaves, in its own
 * transaction, one tombstone per event it removed, and ingest answers an
 * event whose id is tombstoned for its application as a duplicate that
 * writes nothing (`ingest/_tombstones.ts`).
 *
 * A tombstone holds no readable id: the application, an HMAC-SHA256 of the
 * event id under a random salt of this database (`obs_state`, created by
 * schema version 6), and the `seq` the event had. The salt lives in the
 * database rather than in the data directory's erasure key because every
 * ingest path must check tombstones, and a library caller or a remote
 * `--db` has no data directory: whoever holds the database can test
 * whether a given id was erased, but cannot list the erased ids.
 *
 * @module
 */

import { createHash } from "node:crypto";
import type { InValue } from "@libsql/client";
import { StorageError } from "../errors.ts";

/** `obs_state` key of the salt tombstone digests are made with (hex). */
export const TOMBSTONE_SALT_KEY = "erasure.tombstone_salt";

/** Runs one statement in the caller's transaction and returns its rows (none for a write), keyed by column name. */
export type TransactionStatement = (
  sql: string,
  args: InValue[],
) => Promise<Record<string, unknown>[]>;

/** An event an erasure removed: its key in the index. */
export interface TombstonedEvent {
  application_id: string;
  event_id: string;
  seq: number;
}

/** Tombstones written per statement: a bound on the statement's JSON argument. */
const TOMBSTONES_PER_STATEMENT = 1_000;

/** The database's tombstone salt (schema version 6 makes it); throws when it is missing or malformed. */
async function tombstoneSalt(
  read: TransactionStatement,
): Promise<Uint8Array> {
  const rows = await read("SELECT value FROM obs_state WHERE key = ?", [
    TOMBSTONE_SALT_KEY,
  ]);
  const hex = rows[0]?.value;
  if (typeof hex !== "string" || !/^[0-9a-f]{64}$/.test(hex)) {
    throw new StorageError(
      "Cannot check erased events: the index's tombstone salt (obs_state key erasure.tombstone_salt) is missing or malformed; restore the database from a backup",
    );
  }
  return Uint8Array.from(hex.match(/../g)!, (byte) => parseInt(byte, 16));
}

/** Digests an event id of an application as its tombstone names it (hex). */
export type TombstoneDigester = (
  applicationId: string,
  eventId: string,
) => string;

/** SHA-256's block size: HMAC pads its key to it. */
const SHA256_BLOCK_BYTES = 64;

/**
 * The tombstone digest of an event of an application: HMAC-SHA256 under
 * `salt` (at most one block) of the application and event id, in hex.
 * The pads are computed once per salt: `createHmac` sets its key up on
 * every call, which costs several times the hashing of a short id.
 */
export function tombstoneDigester(salt: Uint8Array): TombstoneDigester {
  if (salt.length > SHA256_BLOCK_BYTES) {
    throw new RangeError("A tombstone salt must be at most 64 bytes");
  }
  const inner = new Uint8Array(SHA256_BLOCK_BYTES).fill(0x36);
  const outer = new Uint8Array(SHA256_BLOCK_BYTES).fill(0x5c);
  salt.forEach((byte, i) => {
    inner[i]! ^= byte;
    outer[i]! ^= byte;
  });
  return (applicationId, eventId) => {
    const message = createHash("sha256").update(inner)
      .update(`${applicationId}\0${eventId}`).digest();
    return createHash("sha256").update(outer).update(message).digest("hex");
  };
}

/**
 * The applications among `applicationIds` that have at least one
 * tombstone: one probe of the primary key each, so a group of batches of
 * applications that never had an event erased pays this and nothing more.
 */
async function applicationsWithTombstones(
  read: TransactionStatement,
  applicationIds: Iterable<string>,
): Promise<Set<string>> {
  const rows = await read(
    `SELECT value AS application_id FROM json_each(?)
      WHERE EXISTS (SELECT 1 FROM obs_erased_events WHERE application_id = value)`,
    [JSON.stringify([...applicationIds])],
  );
  return new Set(rows.map((row) => String(row.application_id)));
}

/** Of `eventIds` of `applicationId`, those an erasure removed, each with the `seq` it had. */
async function tombstonedEvents(
  read: TransactionStatement,
  digest: TombstoneDigester,
  applicationId: string,
  eventIds: Iterable<string>,
): Promise<Map<string, number>> {
  const byDigest = new Map<string, string>();
  for (const id of eventIds) byDigest.set(digest(applicationId, id), id);
  const rows = await read(
    `SELECT digest, seq FROM obs_erased_events
      WHERE application_id = ?1 AND digest IN (SELECT value FROM json_each(?2))`,
    [applicationId, JSON.stringify([...byDigest.keys()])],
  );
  const erased = new Map<string, number>();
  for (const row of rows) {
    const id = byDigest.get(String(row.digest));
    if (id !== undefined) erased.set(id, Number(row.seq));
  }
  return erased;
}

/**
 * Of the event ids of each application in `idsByApplication`, those an
 * erasure removed, each with the `seq` it had, by application. One query
 * when none of the applications had an event erased; the salt is read and
 * ids are digested only for those that did.
 */
export async function erasedEventsByApplication(
  read: TransactionStatement,
  idsByApplication: ReadonlyMap<string, Iterable<string>>,
): Promise<Map<string, Map<string, number>>> {
  const found = new Map<string, Map<string, number>>();
  const erasedApps = await applicationsWithTombstones(
    read,
    idsByApplication.keys(),
  );
  if (erasedApps.size === 0) return found;
  const digest = tombstoneDigester(await tombstoneSalt(read));
  for (const applicationId of erasedApps) {
    const ids = idsByApplication.get(applicationId)!;
    found.set(
      applicationId,
      await tombstonedEvents(read, digest, applicationId, ids),
    );
  }
  return found;
}

/**
 * Records a tombstone for each of `events`, in the erasure's transaction
 * (an id tombstoned already keeps its first tombstone).
 */
export async function recordTombstones(
  read: TransactionStatement,
  events: readonly TombstonedEvent[],
): Promise<void> {
  if (events.length === 0) return;
  const digest = tombstoneDigester(await tombstoneSalt(read));
  for (let at = 0; at < events.length; at += TOMBSTONES_PER_STATEMENT) {
    const rows = events.slice(at, at + TOMBSTONES_PER_STATEMENT).map((e) => [
      e.application_id,
      digest(e.application_id, e.event_id),
      e.seq,
    ]);
    await read(
      `INSERT INTO obs_erased_events (application_id, digest, seq)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
          json_extract(value, '$[2]')
        FROM json_each(?) WHERE true
        ON CONFLICT (application_id, digest) DO NOTHING`,
      [JSON.stringify(rows)],
    );
  }
}

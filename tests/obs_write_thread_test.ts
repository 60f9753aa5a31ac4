/**
 * The write thread (`trace serve` runs one): a group's transaction runs on a
 * worker with a connection of its own, and everything a batch is promised
 * holds as on the thread that serves requests: the same rows, conflicts
 * refused whole, a failed write loses nothing, and stopping the thread
 * lets the write in progress finish.
 */

import assert from "node:assert/strict";
import {
  serveCommand,
  withDb,
  withListeningChild,
  withTempDir,
} from "./_helpers.ts";
import { openDb, openMemoryDb, type TraceDb } from "../lib/db.ts";
import {
  IngestConflictError,
  ingestEvents,
  startWriteThread,
} from "../lib/obs/ingest/mod.ts";
import { writeThreadOf } from "../lib/obs/ingest/write_thread.ts";
import { initializeObs, observeIngest } from "../lib/obs/mod.ts";
import { StorageError } from "../lib/errors.ts";
import { writesHeld } from "../lib/_db_write_gate.ts";
import { dumpIndex, INDEX_TABLES, varietyEvents } from "./_index_rows.ts";

const now = () => Date.UTC(2026, 8, 2);

function events(count: number, prefix = "e"): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    event_id: `${prefix}-${i}`,
    application_id: "app-1",
    user_id: `u-${i % 3}`,
    agent_id: "agent-1",
    kind: "retrieval",
    status: "ok",
    started_at: new Date(Date.UTC(2026, 8, 1) + i).toISOString(),
  }));
}

async function countEvents(db: TraceDb): Promise<number> {
  const rows = await db.client.execute("SELECT COUNT(*) AS n FROM obs_events");
  return Number(rows.rows[0]!.n);
}

/** Runs `fn` with an initialized local index whose writes run on a thread. */
function withThread(fn: (db: TraceDb) => Promise<void>): Promise<void> {
  return withDb(async (db) => {
    await initializeObs(db);
    const thread = await startWriteThread(db);
    try {
      assert.ok(writeThreadOf(db), "the thread runs");
      await fn(db);
      assert.ok(writeThreadOf(db)!.writesSent > 0, "writes went to the thread");
    } finally {
      await thread.stop();
    }
  });
}

Deno.test("the write thread stores the same rows as the thread that serves requests", async () => {
  const batch = varietyEvents();
  const ingestAll = async (db: TraceDb) => {
    await ingestEvents(db, batch.slice(0, 60), { now });
    // One after the other: which of two concurrent batches is written first
    // is up to the machine, and it decides their seqs.
    const results = [
      await ingestEvents(db, batch, { now }), // repeats, then new ids
      await ingestEvents(db, batch.slice(50, 80), { now }), // repeats only
    ];
    return results.map(({ inserted, duplicates, items }) => ({
      inserted,
      duplicates,
      items,
    }));
  };
  await withDb(async (here) => {
    await initializeObs(here);
    const expected = await ingestAll(here);
    await withThread(async (db) => {
      assert.deepEqual(await ingestAll(db), expected);
      const threaded = await dumpIndex(db);
      const inline = await dumpIndex(here);
      for (const table of INDEX_TABLES) {
        assert.ok(threaded[table]!.length > 0, table);
        assert.deepEqual(threaded[table], inline[table], table);
      }
      const counts = await db.client.execute(
        "SELECT * FROM obs_counts ORDER BY 1",
      );
      const hereCounts = await here.client.execute(
        "SELECT * FROM obs_counts ORDER BY 1",
      );
      assert.deepEqual(counts.rows, hereCounts.rows);
    });
  });
});

Deno.test("ingest observers see a rootless child under the root it was written with, on either thread", async () => {
  const parent = { ...events(1, "parent")[0]!, root_trace_id: "task-1" };
  const child = { ...events(1, "child")[0]!, parent_event_id: "parent-0" };
  const seenRoots = async (db: TraceDb) => {
    const seen: Record<string, string | null> = {};
    const stop = observeIngest((_db, written) => {
      for (const { meta } of written) seen[meta.event_id] = meta.root_trace_id;
    });
    try {
      await ingestEvents(db, [parent], { now });
      // The child twice: the repeat is a duplicate of the first copy.
      await ingestEvents(db, [child, child], { now });
    } finally {
      stop();
    }
    return seen;
  };
  const expected = { "parent-0": "task-1", "child-0": "task-1" };
  await withDb(async (here) => {
    await initializeObs(here);
    assert.deepEqual(await seenRoots(here), expected);
  });
  await withThread(async (db) => {
    assert.deepEqual(await seenRoots(db), expected);
  });
});

Deno.test("a batch the write thread finds in conflict is refused whole, beside batches it accepts", async () => {
  await withThread(async (db) => {
    await ingestEvents(db, events(10), { now });
    const changed: Record<string, unknown>[] = events(20).map((event, i) => ({
      ...event,
      event_id: `x-${i}`,
    }));
    changed[15] = { ...events(10)[5]!, kind: "selection" }; // e-5, another payload
    const [refused, accepted] = await Promise.allSettled([
      ingestEvents(db, changed, { now }),
      ingestEvents(db, events(30, "f"), { now }),
    ]);
    assert.equal(refused.status, "rejected");
    assert.ok(refused.reason instanceof IngestConflictError);
    assert.deepEqual(refused.reason.items.map((issue) => issue.index), [15]);
    assert.match(refused.reason.message, /"e-5" is already stored/);
    assert.equal(accepted.status, "fulfilled");
    assert.equal(accepted.value.inserted, 30);
    assert.equal(await countEvents(db), 40, "nothing of the refused batch");
  });
});

Deno.test("a write the thread cannot finish fails as a storage error and stores nothing of its batch", async () => {
  await withThread(async (db) => {
    await db.client.execute(
      `CREATE TRIGGER refuse_boom BEFORE INSERT ON obs_events
       WHEN NEW.event_id = 'boom' BEGIN SELECT RAISE(FAIL, 'refused by the test'); END`,
    );
    const batch = [...events(700), { ...events(1)[0]!, event_id: "boom" }];
    await assert.rejects(
      ingestEvents(db, batch, { now }),
      (error: unknown) =>
        error instanceof StorageError &&
        /refused by the test/.test(error.message),
    );
    assert.equal(await countEvents(db), 0);
    const later = await ingestEvents(db, events(5), { now });
    assert.equal(later.inserted, 5, "the thread keeps writing");
    assert.ok(writeThreadOf(db));
  });
});

Deno.test("stopping the write thread lets its write finish; later writes run on the calling thread", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const thread = await startWriteThread(db);
    const writing = ingestEvents(db, events(20_000), { now });
    // Validation first, then the group's write holds the file's writes.
    while (!writesHeld(db.path!)) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await thread.stop();
    assert.equal(writeThreadOf(db), undefined);
    assert.equal((await writing).inserted, 20_000);
    assert.equal((await ingestEvents(db, events(3, "g"), { now })).inserted, 3);
    assert.equal(await countEvents(db), 20_003);
    await thread.stop(); // twice is harmless
  });
});

Deno.test("no write thread where ingest writes through the client", async () => {
  const memory = openMemoryDb();
  try {
    await initializeObs(memory);
    const thread = await startWriteThread(memory);
    assert.equal(writeThreadOf(memory), undefined);
    assert.equal((await ingestEvents(memory, events(4), { now })).inserted, 4);
    await thread.stop();
  } finally {
    memory.close();
  }
});

Deno.test("trace serve stopped while batches are in flight answers each, and keeps every one it acknowledged", async () => {
  // Small enough that the batches in flight finish within shutdown's 5 s
  // grace on a loaded machine (it cuts what is left after that, by design).
  const clients = 8;
  const size = 1_500;
  await withTempDir(async (dir) => {
    const command = serveCommand(dir, {
      unset: ["TRACE_INGEST_TOKEN", "TRACE_UI_AUTH_TOKEN"],
    });
    const answers = await withListeningChild(command, async (url, child) => {
      const posts = Array.from({ length: clients }, async (_, client) => {
        const response = await fetch(`${url}/api/events`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(events(size, `c${client}`)),
        });
        return { status: response.status, body: await response.json() };
      });
      // Stopped once the first is answered: the others are being written or wait their turn.
      await Promise.race(posts);
      child.kill("SIGTERM");
      return await Promise.all(posts);
    });
    for (const { status, body } of answers) {
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.inserted, size);
    }
    const db = await openDb({ dataDir: dir, readOnly: true });
    try {
      assert.equal(await countEvents(db), clients * size);
    } finally {
      db.close();
    }
  });
});

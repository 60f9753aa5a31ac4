/**
 * A large batch is written in slices inside one transaction: the event loop
 * turns between them (readers and other requests run), the batch stays all
 * or nothing, and other writes wait for it instead of for SQLite's lock.
 */

import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import { checkpointWal, type TraceDb } from "../lib/db.ts";
import { writesHeld } from "../lib/_db_write_gate.ts";
import { StorageError } from "../lib/errors.ts";
import {
  IngestConflictError,
  ingestEvents,
  parseNdjsonEvents,
  readNdjsonEvents,
  startWriteThread,
} from "../lib/obs/ingest/mod.ts";
import { EVENTS_PER_SLICE } from "../lib/obs/ingest/_write_group.ts";
import { writeThreadOf } from "../lib/obs/ingest/write_thread.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { runInTurns, WRITE_SLICE_MS } from "../lib/obs/ingest/_turns.ts";

function events(count: number, tag = ""): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    event_id: `e-${i}`,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    thread_id: `t-${i % 7}${tag}`,
  }));
}

async function count(db: TraceDb, table: string): Promise<number> {
  const result = await db.client.execute(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(result.rows[0]!.n);
}

/** Runs `probe` on every timer turn until `work` settles; returns what it logged. */
async function whileRunning<T>(
  work: Promise<T>,
  probe: (log: string[]) => Promise<void> | void,
): Promise<string[]> {
  const log: string[] = [];
  let settled = false;
  const done = work.then(
    () => log.push("work settled"),
    () => log.push("work settled"),
  ).finally(() => settled = true);
  while (!settled) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (!settled) await probe(log);
  }
  await done;
  return log;
}

const LATE = 6 * EVENTS_PER_SLICE;

Deno.test("ingestEvents() writes nothing when the last script of a large batch fails", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const last = `e-${LATE - 1}`;
    await db.client.execute(
      `CREATE TRIGGER fail_late BEFORE INSERT ON obs_events
       WHEN NEW.event_id = '${last}' BEGIN SELECT RAISE(ABORT, 'refused late'); END`,
    );
    await assert.rejects(
      ingestEvents(db, events(LATE)),
      (error) =>
        error instanceof StorageError && /refused late/.test(error.message),
    );
    for (const table of ["obs_envelopes", "obs_events", "obs_previews"]) {
      assert.equal(await count(db, table), 0, table);
    }
    await db.client.execute("DROP TRIGGER fail_late");
    const result = await ingestEvents(db, events(LATE));
    assert.equal(result.inserted, LATE);
    assert.equal(await count(db, "obs_events"), LATE);
  });
});

Deno.test("ingestEvents() refuses a large batch whole for a conflict in its last script", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const stored = events(LATE, "-before").slice(-1);
    await ingestEvents(db, stored);
    await assert.rejects(
      ingestEvents(db, events(LATE)),
      (error) =>
        error instanceof IngestConflictError &&
        error.items.length === 1 && error.items[0]!.index === LATE - 1,
    );
    assert.equal(await count(db, "obs_envelopes"), 1);
    assert.equal(await count(db, "obs_events"), 1);
  });
});

Deno.test("a reader gets turns while a large batch is written, and sees none of it before the commit", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const total = 40 * EVENTS_PER_SLICE;
    const log = await whileRunning(
      ingestEvents(db, events(total)),
      async (log) => {
        // Only turns taken inside the write transaction count here.
        if (!writesHeld(db.path!)) return;
        log.push(`read ${await count(db, "obs_events")} while writing`);
      },
    );
    const reads = log.filter((entry) => entry.startsWith("read"));
    assert.ok(reads.length > 0, "no reader ran while the batch was written");
    assert.ok(
      reads.every((entry) => entry === "read 0 while writing"),
      reads.join(),
    );
    assert.equal(log.at(-1), "work settled");
    assert.equal(await count(db, "obs_events"), total);
  });
});

Deno.test("another write waits for a large batch's transaction instead of SQLite's lock", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await db.client.execute("CREATE TABLE probe (x INTEGER)");
    const total = 40 * EVENTS_PER_SLICE;
    let write: Promise<unknown> | undefined;
    const order: string[] = [];
    const log = await whileRunning(ingestEvents(db, events(total)), () => {
      if (write || !writesHeld(db.path!)) return;
      order.push("write sent while the batch is written");
      // Without the gate this waits in SQLite's busy handler, on this thread, and fails.
      write = db.client.execute("INSERT INTO probe (x) VALUES (1)").then(() =>
        order.push(
          `write done, batch ${writesHeld(db.path!) ? "open" : "closed"}`,
        )
      );
    });
    assert.ok(write, "the batch never took a turn while it was written");
    await write;
    assert.deepEqual(order, [
      "write sent while the batch is written",
      "write done, batch closed",
    ]);
    assert.equal(log.at(-1), "work settled");
    assert.equal(await count(db, "probe"), 1);
    assert.equal(await count(db, "obs_events"), total);
  });
});

for (const onThread of [false, true]) {
  const where = onThread ? "on the write thread" : "on this thread";
  Deno.test(`an ingest ${where} waits for another write transaction of the process instead of SQLite's lock`, async () => {
    await withDb(async (db) => {
      await initializeObs(db);
      const thread = onThread ? await startWriteThread(db) : undefined;
      try {
        const order: string[] = [];
        const tx = await db.client.transaction("write");
        await tx.execute(
          "INSERT INTO obs_state (key, value, updated_at) VALUES ('probe', '1', 1)",
        );
        // Without the hold the ingest waits in SQLite's busy handler (on this
        // thread: the commit below never runs) and fails after the busy timeout.
        const ingest = ingestEvents(db, events(3)).then((result) => {
          order.push(`ingest done: ${result.inserted}`);
        });
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(writesHeld(db.path!), true, "the transaction holds");
        if (onThread) {
          assert.equal(writeThreadOf(db)!.writesSent, 0, "nothing sent yet");
        }
        order.push("transaction commits");
        await tx.commit();
        tx.close();
        await ingest;
        assert.deepEqual(order, ["transaction commits", "ingest done: 3"]);
        assert.equal(writesHeld(db.path!), false);
      } finally {
        await thread?.stop();
      }
    });
  });
}

Deno.test("writes waiting for the same transaction go one at a time once it ends", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const first = await db.client.transaction("write");
    const ingest = ingestEvents(db, events(3));
    const second = db.client.transaction("write").then(async (tx) => {
      await tx.execute(
        "INSERT INTO obs_state (key, value, updated_at) VALUES ('second', '1', 1)",
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tx.commit();
      tx.close();
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await first.commit();
    first.close();
    // Let in together, one of them would wait in SQLite's busy handler for the busy timeout.
    assert.equal((await ingest).inserted, 3);
    await second;
    assert.equal(await count(db, "obs_events"), 3);
  });
});

Deno.test("every write of the client holds the file's writes while it runs; reads do not", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await db.client.execute("CREATE TABLE probe (x INTEGER)");
    const path = db.path!;
    const writes: [string, () => Promise<unknown>][] = [
      ["execute", () => db.client.execute("INSERT INTO probe VALUES (1)")],
      ["batch", () => db.client.batch(["INSERT INTO probe VALUES (2)"])],
      [
        "executeMultiple",
        () => db.client.executeMultiple("INSERT INTO probe VALUES (3);"),
      ],
      ["checkpoint", () => db.client.execute("PRAGMA wal_checkpoint(PASSIVE)")],
    ];
    for (const [name, write] of writes) {
      const running = write();
      // Claimed before the call returns: no ingest can begin between the wait and the statement.
      assert.equal(writesHeld(path), true, name);
      await running;
      assert.equal(writesHeld(path), false, name);
    }
    const read = db.client.execute("SELECT COUNT(*) AS n FROM probe");
    assert.equal(writesHeld(path), false, "a read");
    assert.equal(Number((await read).rows[0]!.n), 3);
  });
});

Deno.test("a read that starts with WITH does not wait for the writes of the file", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const tx = await db.client.transaction("write");
    try {
      const read = await db.client.execute(
        "WITH n AS MATERIALIZED (SELECT COUNT(*) AS c FROM obs_events) SELECT c FROM n",
      );
      assert.equal(Number(read.rows[0]!.c), 0);
      assert.equal(
        writesHeld(db.path!),
        true,
        "read while the transaction holds",
      );
    } finally {
      tx.close();
    }
  });
});

Deno.test("a WAL checkpoint waits for a large batch's transaction instead of SQLite's busy handler", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    let checkpoint: Promise<boolean> | undefined;
    await whileRunning(ingestEvents(db, events(40 * EVENTS_PER_SLICE)), () => {
      if (checkpoint || !writesHeld(db.path!)) return;
      // TRUNCATE waits for the writer: on this thread, for the whole busy timeout.
      checkpoint = checkpointWal(db).then(({ complete }) =>
        complete && !writesHeld(db.path!)
      );
    });
    assert.ok(checkpoint, "the batch never took a turn while it was written");
    assert.equal(await checkpoint, true);
  });
});

Deno.test("readNdjsonEvents() gives way to the event loop while it parses and answers as parseNdjsonEvents()", async () => {
  const text = events(40_000).map((e) => JSON.stringify(e)).join("\n");
  // A parse of several slices lets an operation the event loop resolves (as
  // a request arriving on the network) through before it ends; one that
  // never gave way would end first every time. A loaded machine may finish
  // the operation late: a few tries are allowed. (Timers run every tenth
  // slice, more than a parse this size takes on a quick machine.)
  const tries = await triesWithPoll(
    3,
    (log) => readNdjsonEvents(text).then(() => log.push("work settled")),
    (log) => log[0] === "poll",
  );
  assert.equal(
    tries.at(-1)![0],
    "poll",
    tries.map((l) => l.join()).join(" | "),
  );
  assert.deepEqual(await readNdjsonEvents(text), parseNdjsonEvents(text));
  const bad = `${text}\n{"event_id":`;
  await assert.rejects(readNdjsonEvents(bad), /line 40001/);
});

/**
 * Runs `work` up to `times` times, each just after sending an operation the
 * event loop's poll resolves (`poll` in the log), as a request arriving on
 * the network is, until `done` holds for a try's log; the logs of the tries.
 */
async function triesWithPoll(
  times: number,
  work: (log: string[]) => Promise<unknown>,
  done: (log: string[]) => boolean,
): Promise<string[][]> {
  const tries: string[][] = [];
  for (let attempt = 0; attempt < times; attempt++) {
    const log: string[] = [];
    void crypto.subtle.digest("SHA-256", new Uint8Array(0)).then(() =>
      log.push("poll")
    );
    await work(log);
    tries.push(log);
    if (done(log)) break;
  }
  return tries;
}

/** Holds the calling thread, as parsing or a local statement does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

function* steps(
  log: string[],
  name: string,
  ms: number,
  count = 2,
): Generator<void> {
  for (let i = 0; i < count; i++) {
    busy(ms);
    log.push(name);
    yield;
  }
}

Deno.test("write-path work of the process takes one slice per turn of the event loop, however many batches wait", async () => {
  // An operation the event loop's poll resolves, as a request arriving on
  // the network is, is sent just before two batches start. With one line of
  // turns for the process it is answered between a's slice and b's, once it
  // has finished on its thread; a loaded machine may finish it late, so a
  // few tries are allowed. Each batch giving way on its own would run b
  // right after a, before any poll, on every try.
  const pollBetween = (log: string[]) => log.slice(0, 3).join() === "a,poll,b";
  const tries = await triesWithPoll(
    5,
    (log) =>
      Promise.all([
        runInTurns(steps(log, "a", WRITE_SLICE_MS + 1)),
        runInTurns(steps(log, "b", WRITE_SLICE_MS + 1)),
      ]),
    pollBetween,
  );
  if (pollBetween(tries.at(-1)!)) return;
  assert.fail(
    `never a, poll, b: ${tries.map((log) => log.join()).join(" | ")}`,
  );
});

Deno.test("write-path work lets a due timer run within ten slices", async () => {
  const log: string[] = [];
  setTimeout(() => log.push("timer"), 0);
  await runInTurns(steps(log, "w", WRITE_SLICE_MS + 1, 30));
  const at = log.indexOf("timer");
  assert.ok(at >= 0 && at <= 11, log.join());
});

Deno.test("a request to a server of the same process is answered while a large batch is written", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("ok"),
    );
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const writing = ingestEvents(db, events(60 * EVENTS_PER_SLICE));
    // Sent once the batch's transaction is open, from a quick turn of the write path.
    while (!writesHeld(db.path!)) {
      await crypto.subtle.digest("SHA-256", new Uint8Array(0));
    }
    const answered = fetch(url).then(async (response) =>
      `${await response.text()} while ${
        writesHeld(db.path!) ? "writing" : "idle"
      }`
    );
    await writing;
    assert.equal(await answered, "ok while writing");
  });
});

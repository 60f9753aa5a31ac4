import assert from "node:assert/strict";
import { captureIo, withDb, withTempDir } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { openDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { parity, retention } from "../lib/obs/maint/mod.ts";
import { loadCommand } from "../cli.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-09-30T00:00:00Z");

/** An event with a preview, dated `startedAt`. */
function event(id: string, startedAt: string) {
  return {
    event_id: id,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: startedAt,
    preview: `the content of ${id}`,
  };
}

/**
 * Received 10 days before `now`: an event dated in 2100 (a writer's clock
 * far ahead) and one dated 4 days before `now` (a clock 6 days ahead).
 * Received yesterday: one dated in 2100 and one dated then.
 */
async function seedDatedAhead(db: TraceDb, now: number): Promise<void> {
  await ingestEvents(db, [
    event("ahead-old", "2100-01-01T00:00:00.000Z"),
    event("days-ahead-old", new Date(now - 4 * DAY).toISOString()),
  ], { now: () => now - 10 * DAY });
  await ingestEvents(db, [
    event("ahead-new", "2100-01-01T00:00:00.000Z"),
    event("today", new Date(now - DAY).toISOString()),
  ], { now: () => now - DAY });
}

async function previewsOf(db: TraceDb): Promise<string[]> {
  const result = await db.client.execute(
    `SELECT e.event_id FROM obs_previews p JOIN obs_events e USING (seq)
      ORDER BY e.event_id`,
  );
  return result.rows.map((row) => String(row.event_id));
}

Deno.test("retention expires a preview received before the period by its receipt, however far ahead its event is dated, and keeps its index row", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await seedDatedAhead(db, NOW);
    const planned = await retention(db, { now: () => NOW });
    assert.equal(planned.previews, 2);
    assert.equal(planned.previews_by_receipt, 2);
    assert.equal(planned.preview_digests, 2);
    assert.equal(planned.events, 0);
    assert.deepEqual(await previewsOf(db), [
      "ahead-new",
      "ahead-old",
      "days-ahead-old",
      "today",
    ]);

    const applied = await retention(db, {
      dryRun: false,
      now: () => NOW,
      reclaim: false,
    });
    assert.equal(applied.previews, 2);
    assert.equal(applied.previews_by_receipt, 2);
    assert.equal(applied.preview_digests, 2);
    assert.deepEqual(await previewsOf(db), ["ahead-new", "today"]);
    const rows = await db.client.execute(
      "SELECT COUNT(*) AS n FROM obs_events",
    );
    assert.equal(Number(rows.rows[0]!.n), 4, "metadata counts from event time");
    for (const id of ["ahead-old", "days-ahead-old"]) {
      const envelope = await db.client.execute({
        sql: "SELECT body FROM obs_envelopes WHERE event_id = ?",
        args: [id],
      });
      assert.doesNotMatch(
        String(envelope.rows[0]!.body),
        /sha256/,
        `${id}: the envelope names the removed preview by its size only`,
      );
    }
    assert.equal((await parity(db)).status, "ok");
    const again = await retention(db, { now: () => NOW });
    assert.equal(again.previews, 0, "nothing is left to expire");
    assert.equal(again.preview_digests, 0);
  });
});

Deno.test("trace obs retention names the previews that expire by receipt and the clock to check", async () => {
  await withTempDir(async (dataDir) => {
    const db = await openDb({ dataDir });
    try {
      await initializeObs(db);
      await seedDatedAhead(db, Date.now());
    } finally {
      db.close();
    }
    const loaded = await loadCommand([
      "obs",
      "retention",
      "--data-dir",
      dataDir,
    ]);
    const io = captureIo();
    assert.equal(await loaded.command(loaded.args, io), 0);
    assert.match(io.stdout(), /would delete: 2 previews,/);
    assert.match(
      io.stdout(),
      /^2 previews were received before \S+ but dated after it, and would expire by receipt: check the clock \(and time units\) of the producer that wrote them$/m,
    );
  });
});

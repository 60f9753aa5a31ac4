import assert from "node:assert/strict";
import { captureIo, withTempDir } from "./_helpers.ts";
import { events, obsInit } from "../cli/events.ts";
import { IngestBatchError } from "../lib/obs/ingest.ts";

function line(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event_id: `e${i}`,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: new Date(Date.UTC(2026, 8, 1, 0, 0, i)).toISOString(),
    ...extra,
  });
}

Deno.test("events ingest/query/export/summary work end to end on a data dir", async () => {
  await withTempDir(async (dir) => {
    const init = captureIo();
    assert.equal(await obsInit(["--data-dir", dir, "--json"], init), 0);
    assert.equal(JSON.parse(init.stdout()).applied.length, 1);

    const stdin = [
      line(1, { preview: "cli-secret" }),
      line(2, { store: "tool_log" }),
      line(3),
    ].join("\n");
    const ingest = captureIo(stdin);
    assert.equal(
      await events(["ingest", "-", "--data-dir", dir, "--json"], ingest),
      0,
    );
    assert.deepEqual(JSON.parse(ingest.stdout()), {
      batches: 1,
      inserted: 3,
      duplicates: 0,
    });

    const query = captureIo();
    assert.equal(
      await events([
        "query",
        "--agent",
        "agent-1",
        "--limit",
        "2",
        "--json",
        "--data-dir",
        dir,
      ], query),
      0,
    );
    const page = JSON.parse(query.stdout());
    assert.deepEqual(page.events.map((e: { event_id: string }) => e.event_id), [
      "e3",
      "e2",
    ]);
    assert.equal(page.has_more, true);

    const human = captureIo();
    await events(["query", "--q", "e1", "--data-dir", dir], human);
    assert.match(human.stdout(), /e1 .*root=e1/);
    assert.match(human.stdout(), /instrumentation coverage: unknown/);

    const exported = captureIo();
    assert.equal(
      await events(
        ["export", "--store", "tool_log", "--data-dir", dir],
        exported,
      ),
      0,
    );
    assert.deepEqual(
      exported.stdout().trim().split("\n").map((l) => JSON.parse(l).event_id),
      ["e2"],
    );
    const all = captureIo();
    await events(["export", "--data-dir", dir], all);
    assert.equal(all.stdout().trim().split("\n").length, 3);
    assert.ok(!all.stdout().includes("cli-secret"));

    const summary = captureIo();
    assert.equal(
      await events(["summary", "--json", "--data-dir", dir], summary),
      0,
    );
    assert.equal(JSON.parse(summary.stdout()).events, 3);
  });
});

Deno.test("events ingest reports every refused line and writes nothing", async () => {
  await withTempDir(async (dir) => {
    await obsInit(["--data-dir", dir], captureIo());
    const io = captureIo([line(1), "{nope", line(3, { kind: "" })].join("\n"));
    await assert.rejects(
      events(["ingest", "-", "--data-dir", dir], io),
      IngestBatchError,
    );
    assert.match(io.stderr(), /item 1: \(root\): line 2 is not valid JSON/);
    const query = captureIo();
    await events(["query", "--json", "--data-dir", dir], query);
    assert.equal(JSON.parse(query.stdout()).events.length, 0);
  });
});

Deno.test("events export refuses an unknown store", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      events(
        ["export", "--store", "everything", "--data-dir", dir],
        captureIo(),
      ),
      /--store must be one of/,
    );
  });
});

Deno.test("events query needs an initialized index", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      events(["query", "--data-dir", dir], captureIo()),
      /run trace obs init first/,
    );
  });
});

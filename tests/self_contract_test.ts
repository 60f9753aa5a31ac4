/** Trace passes its own deletion contract: the index behind the staging adapter, in process, served, and by trace serve. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import { ConfigError } from "../lib/errors.ts";
import { listReceipts } from "../lib/ledger/erasure_receipts.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import {
  createSelfStagingAdapter,
  SELF_NO_MATCH,
  type SelfStagingAdapter,
} from "../lib/obs/self_contract/mod.ts";
import { runReferenceSystem } from "../lib/reference/suite.ts";
import { findSystem } from "../lib/reference/systems.ts";
import { selfStagingWithReceipts } from "../lib/runs/mod.ts";
import { createApp } from "../routes/app.ts";
import {
  captureIo,
  serveCommand,
  withListeningChild,
  withServer,
  withTempDir,
} from "./_helpers.ts";
import { TEST_KEY, withErasureDb } from "./erasure_support.ts";

Deno.test("the trace-index reference system PASSes and its defective erasure FAILs, in process", async () => {
  const good = await runReferenceSystem(findSystem("trace-index")!);
  assert.deepEqual(good.evaluation.mismatches, []);
  assert.equal(good.report.verdict, "PASS");
  assert.equal(good.report.cleanup.cleanup_complete, true);
  assert.deepEqual(good.hidden, {
    source_records: 0,
    vector_records: 0,
    cache_records: 0,
  });
  assert.deepEqual(good.report.baseline.inventory, {
    complete: true,
    source_records: 3,
    vector_records: 3,
    cache_records: 3,
  });

  const broken = await runReferenceSystem(
    findSystem("trace-index-skips-previews")!,
  );
  assert.deepEqual(broken.evaluation.mismatches, []);
  assert.equal(broken.report.verdict, "FAIL");
  const last = broken.report.samples.at(-1)!;
  assert.deepEqual(
    [
      last.inventory?.source_records,
      last.inventory?.cache_records,
      last.marker_seen,
    ],
    [0, 3, true],
  );
  assert.equal(broken.hidden.cache_records, 3);
});

async function withAdapter<T>(
  fn: (adapter: SelfStagingAdapter, db: TraceDb) => Promise<T>,
): Promise<T> {
  return await withErasureDb(async (db) =>
    await fn(createSelfStagingAdapter(db, { key: TEST_KEY }), db)
  );
}

Deno.test("the self staging adapter answers the four operations from the index", async () => {
  await withAdapter(async (adapter) => {
    const ns = "trace-test-1";
    for (const [id, text] of [["d1", "alpha MARK_1"], ["d2", "beta"]]) {
      const { response } = await adapter.handle("ingest", {
        namespace: ns,
        id,
        text,
      });
      assert.deepEqual(response, { id });
    }
    await adapter.handle("ingest", {
      namespace: "other",
      id: "o1",
      text: "MARK_1 too",
    });
    assert.deepEqual(
      (await adapter.handle("inventory", { namespace: ns })).response,
      {
        complete: true,
        source_records: 2,
        vector_records: 2,
        cache_records: 2,
      },
    );
    assert.equal(
      (await adapter.handle("query", { namespace: ns, query: "MARK_1" }))
        .response
        .text,
      "alpha MARK_1",
    );
    // Deleting ids of another namespace deletes nothing there.
    await adapter.handle("delete", {
      namespace: ns,
      ids: ["o1", "d1", "nope"],
    });
    assert.equal(
      (await adapter.handle("query", { namespace: ns, query: "MARK_1" }))
        .response
        .text,
      SELF_NO_MATCH,
    );
    assert.deepEqual(await adapter.storedCounts(ns), {
      source_records: 1,
      vector_records: 1,
      cache_records: 1,
    });
    assert.equal((await adapter.storedCounts("other")).cache_records, 1);
    await assert.rejects(
      adapter.handle("delete", { namespace: ns }),
      /ids: is required/,
    );
  });
});

function config(url: string): string {
  return JSON.stringify({
    base_url: `${url}/staging`,
    environment: "staging",
    allow_synthetic_writes: true,
    deletion_window_seconds: 1,
    sample_interval_seconds: 0.25,
  });
}

/** `trace external run --config -` against `url`, recorded in its own data directory. */
async function externalRun(url: string, dataDir: string) {
  const io = captureIo(config(url));
  const code = await main(
    ["external", "run", "--config", "-", "--json", "--data-dir", dataDir],
    io,
  );
  return { code, report: JSON.parse(io.stdout()), err: io.stderr() };
}

Deno.test("trace external run against the served index PASSes with cleanup complete, with receipts; the defective erasure FAILs", async () => {
  await withTempDir(async (dir) => {
    const db = await openDb({ dataDir: join(dir, "served") });
    try {
      await migrate(db, ALL_MIGRATIONS);
      const good = selfStagingWithReceipts(db, TEST_KEY);
      const pass = await withServer(
        createApp({ db, stagingAdapter: good }).fetch,
        (server) => externalRun(server.url, join(dir, "runner")),
      );
      assert.equal(pass.code, 0, pass.err);
      assert.equal(pass.report.verdict, "PASS");
      assert.equal(pass.report.cleanup.cleanup_complete, true);
      assert.equal(pass.report.requests.failed, 0);
      const receipts = await listReceipts(db);
      assert.ok(
        receipts.length >= 2,
        "the delete and the cleanup each left a receipt",
      );
      assert.ok(receipts.every((r) => r.receipt.trigger === "staging_adapter"));
      assert.equal((await verifyLedger(db)).ok, true);

      const broken = createSelfStagingAdapter(db, {
        key: TEST_KEY,
        skipPreviews: true,
      });
      const fail = await withServer(
        createApp({ db, stagingAdapter: broken }).fetch,
        (server) => externalRun(server.url, join(dir, "runner")),
      );
      assert.equal(fail.code, 1, fail.err);
      assert.equal(fail.report.verdict, "FAIL");
      const codes = fail.report.findings.map((
        f: { code: string; subject: string },
      ) => `${f.code}:${f.subject}`);
      assert.ok(codes.includes("marker_retrievable:retrieval"), codes.join());
      assert.ok(codes.includes("residual_store:cache_records"), codes.join());
    } finally {
      db.close();
    }
  });
});

Deno.test("createApp() serves the staging adapter only on loopback, behind the app's guards", async () => {
  await withErasureDb(async (db) => {
    const adapter = createSelfStagingAdapter(db, { key: TEST_KEY });
    assert.throws(
      () =>
        createApp({
          db,
          hostname: "0.0.0.0",
          ingestToken: "ingest-token-0123456789",
          stagingAdapter: adapter,
        }),
      (e: unknown) =>
        e instanceof ConfigError && /beyond loopback/.test(e.message),
    );
    const app = createApp({ db, stagingAdapter: adapter });
    const body = JSON.stringify({ namespace: "n" });
    const foreign = await app.request("http://evil.example/staging/inventory", {
      method: "POST",
      headers: { host: "evil.example", "content-type": "application/json" },
      body,
    });
    assert.equal(foreign.status, 403);
    const crossSite = await app.request("http://127.0.0.1/staging/inventory", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: "http://evil.example",
      },
      body,
    });
    assert.equal(crossSite.status, 403);
    const bad = await app.request("http://127.0.0.1/staging/delete", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.equal(bad.status, 400);
    // A delete naming its namespace twice is refused, not read as the last one.
    const twice = await app.request("http://127.0.0.1/staging/delete", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"namespace":"n","namespace":"other","ids":["a"]}',
    });
    assert.equal(twice.status, 400);
    assert.match(
      JSON.stringify(await twice.json()),
      /body: The body gives a field twice \(line 1, column \d+\)/,
    );
    const ok = await app.request("http://127.0.0.1/staging/inventory", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).complete, true);
    const get = await app.request("http://127.0.0.1/staging/query");
    assert.equal(get.status, 405);
    // Without the option there is no adapter.
    const none = await createApp({ db }).request(
      "http://127.0.0.1/staging/inventory",
      { method: "POST", headers: { "content-type": "application/json" }, body },
    );
    assert.equal(none.status, 404);
  });
});

Deno.test("trace serve --staging-adapter: trace external run PASSes against the server's own index", async () => {
  await withTempDir(async (dir) => {
    const served = join(dir, "served");
    const command = serveCommand(served, { args: ["--staging-adapter"] });
    const result = await withListeningChild(
      command,
      (url) => externalRun(url, join(dir, "runner")),
    );
    assert.equal(result.code, 0, result.err);
    assert.equal(result.report.verdict, "PASS");
    assert.equal(result.report.cleanup.cleanup_complete, true);
    const db = await openDb({ dataDir: served, readOnly: true });
    try {
      const receipts = await listReceipts(db);
      assert.ok(receipts.length >= 2);
    } finally {
      db.close();
    }
  });
});

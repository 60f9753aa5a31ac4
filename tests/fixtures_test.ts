/** The example files the README points to stay valid. */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { parseStagingConfigText } from "../lib/contract/config.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

const FIXTURES = new URL("../fixtures/", import.meta.url);

Deno.test("fixtures/events/support_turn.ndjson ingests whole, and its deleted memory is bound to a later answer", async () => {
  await withTempDir(async (dir) => {
    const path = new URL("events/support_turn.ndjson", FIXTURES).pathname;
    const io = captureIo();
    assert.equal(
      await main(["events", "ingest", path, "--json", "--data-dir", dir], io),
      0,
      io.stderr(),
    );
    assert.equal(JSON.parse(io.stdout()).inserted, 6);
    const query = captureIo();
    await main(
      [
        "events",
        "query",
        "--resource",
        "mem-old-address",
        "--json",
        "--data-dir",
        dir,
      ],
      query,
    );
    const kinds = JSON.parse(query.stdout()).events.map((e: { kind: string }) =>
      e.kind
    ).sort();
    assert.deepEqual(kinds, [
      "llm_call",
      "memory_delete",
      "memory_search",
      "selection",
    ]);
  });
});

Deno.test("fixtures/events/support_turn.ndjson leaves health unknown, not degraded: its unregistered profile is an info that says where profiles are registered", async () => {
  await withTempDir(async (dir) => {
    const path = new URL("events/support_turn.ndjson", FIXTURES).pathname;
    assert.equal(
      await main(["events", "ingest", path, "--data-dir", dir], captureIo()),
      0,
    );
    const io = captureIo();
    assert.equal(
      await main(
        ["obs", "health", "--json", "--samples", "1", "--data-dir", dir],
        io,
      ),
      0,
      io.stderr(),
    );
    const report = JSON.parse(io.stdout());
    // Only parity, which never ran, keeps it from ok.
    assert.equal(report.status, "unknown");
    const alert = report.alerts.find((a: { code: string }) =>
      a.code === "unregistered_coverage_profiles"
    );
    assert.equal(alert?.severity, "info");
    assert.equal(alert?.count, 1);
    assert.match(
      alert.message,
      /the process that records the events registers its profiles, through registerCoverageProfile\(\) in the Trace library \(mod\.ts\), which no trace command can do for it/,
    );
    // The fixture still declares its profile: coverage reads it as not covered.
    const query = captureIo();
    await main(
      ["events", "query", "--thread", "t-42", "--json", "--data-dir", dir],
      query,
    );
    const page = JSON.parse(query.stdout());
    assert.equal(page.instrumentation_coverage, "partial");
    assert.equal(page.coverage.gaps[0].problem, "unregistered_profile");
  });
});

Deno.test("fixtures/staging-adapter.json is a valid config", async () => {
  const text = await Deno.readTextFile(
    new URL("staging-adapter.json", FIXTURES),
  );
  assert.equal(parseStagingConfigText(text).base_url, "http://127.0.0.1:8787");
});

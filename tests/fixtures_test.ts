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

Deno.test("fixtures/staging-adapter.json is a valid config", async () => {
  const text = await Deno.readTextFile(
    new URL("staging-adapter.json", FIXTURES),
  );
  assert.equal(parseStagingConfigText(text).base_url, "http://127.0.0.1:8787");
});

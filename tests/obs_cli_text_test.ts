/** `trace events`: gzip files, every refused line, and text views that say what happened and print ids safely. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { captureIo, withTempDir } from "./_helpers.ts";
import { loadCommand } from "../cli.ts";
import type { CliIo } from "../cli/_io.ts";

async function events(args: string[], io: CliIo): Promise<number> {
  const loaded = await loadCommand(["events", ...args]);
  return await loaded.command(loaded.args, io);
}

function line(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event_id: `e${i}`,
    application_id: "app-1",
    agent_id: "agent-1",
    thread_id: "thread-1",
    kind: "retrieval",
    started_at: new Date(Date.UTC(2026, 8, 1, 0, 0, i)).toISOString(),
    ...extra,
  });
}

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("events ingest reads a gzip-compressed file as the HTTP API reads a gzip body", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "events.ndjson.gz");
    await Deno.writeFile(file, await gzip([line(1), line(2)].join("\n")));
    const io = captureIo();
    assert.equal(
      await events(["ingest", file, "--data-dir", dir, "--json"], io),
      0,
    );
    assert.equal(JSON.parse(io.stdout()).inserted, 2);
    const corrupt = join(dir, "corrupt.gz");
    await Deno.writeFile(corrupt, new Uint8Array([0x1f, 0x8b, 1, 2, 3]));
    await assert.rejects(
      events(["ingest", corrupt, "--data-dir", dir], captureIo()),
      /Cannot read .*corrupt\.gz: the gzip data is corrupt/,
    );
  });
});

Deno.test("events ingest lists the first 100 refused lines and counts the rest", async () => {
  await withTempDir(async (dir) => {
    const lines = Array.from(
      { length: 150 },
      (_, i) => i % 2 === 0 ? "{bad" : line(i, { kind: "" }),
    );
    const io = captureIo(lines.join("\n"));
    const error = await events(["ingest", "-", "--data-dir", dir], io).catch((
      e,
    ) => e);
    assert.match(
      error.message,
      /150 events refused \(the first 100 listed above\)/,
    );
    const listed = io.stderr().split("\n").filter((l) =>
      l.startsWith("  line")
    );
    assert.equal(listed.length, 100);
    assert.match(listed[0]!, /^ {2}line 1: is not valid JSON/);
    assert.match(listed[1]!, /^ {2}line 2: kind: must be a lower-case token/);
    assert.match(io.stderr(), /\n {2}… 50 more refused lines\n/);
    const json = captureIo(lines.join("\n"));
    await events(["ingest", "-", "--data-dir", dir, "--json"], json).catch(
      () => {},
    );
    const body = JSON.parse(json.stdout());
    assert.equal(body.error.items.length, 100);
    assert.equal(body.error.unlisted_items, 50);
  });
});

Deno.test("events query text shows the operation, duration and outcome of request events", async () => {
  await withTempDir(async (dir) => {
    const stdin = [
      line(1, {
        kind: "request",
        attributes: {
          "app.op": "/inventory",
          "app.duration_ms": 12.34,
          "app.outcome": "ok",
        },
      }),
      line(2, {
        kind: "tool_call",
        tool: "search",
        started_at: "2026-09-01T00:00:02Z",
        ended_at: "2026-09-01T00:00:03.500Z",
        success: false,
      }),
    ].join("\n");
    await events(["ingest", "-", "--data-dir", dir], captureIo(stdin));
    const io = captureIo();
    assert.equal(await events(["query", "--data-dir", dir], io), 0);
    const [toolCall, request] = io.stdout().split("\n");
    assert.match(request!, /\bop=\/inventory {2}12\.3 ms {2}outcome=ok$/);
    assert.match(toolCall!, /\bop=tool:search {2}1\.50 s {2}outcome=failed$/);
  });
});

Deno.test("events query text escapes control characters a stored value holds", async () => {
  await withTempDir(async (dir) => {
    const stdin = line(1, {
      kind: "request",
      attributes: { "app.op": "/x\u001b[2J\u202eevil" },
    });
    await events(["ingest", "-", "--data-dir", dir], captureIo(stdin));
    const io = captureIo();
    await events(["query", "--data-dir", dir], io);
    assert.ok(
      !io.stdout().includes("\u001b") && !io.stdout().includes("\u202e"),
      "nothing raw",
    );
    assert.match(io.stdout(), /op=\/x\\u\{001b\}\[2J\\u\{202e\}evil/);
  });
});

Deno.test("events summary text lists and explains its groups", async () => {
  await withTempDir(async (dir) => {
    const stdin = [
      line(1),
      line(2, { status: "error" }),
      line(3, { thread_id: "thread-2" }),
      line(4, { agent_id: null, memory_id: "mem-1", thread_id: null }),
    ].join("\n");
    await events(["ingest", "-", "--data-dir", dir], captureIo(stdin));
    const io = captureIo();
    assert.equal(await events(["summary", "--data-dir", dir], io), 0);
    const text = io.stdout();
    assert.match(
      text,
      /\ngroups: 3: events by agent \(or memory\) and thread, most recent first\n/,
    );
    assert.match(text, /\n {2}memory=mem-1 no thread: 1 event, 0 errors, /);
    assert.match(
      text,
      /\n {2}agent=agent-1 thread=thread-1: 2 events, 1 error, /,
    );
  });
});

Deno.test("events query on a kind no event in scope carries says so and lists the kinds there", async () => {
  await withTempDir(async (dir) => {
    const ndjson = [
      line(1),
      line(2, { kind: "memory_search" }),
      line(3, { application_id: "app-2", kind: "tool_call" }),
    ].join("\n");
    assert.equal(
      await events(["ingest", "-", "--data-dir", dir], captureIo(ndjson)),
      0,
    );
    const scope = ["--application", "app-1", "--data-dir", dir];
    const text = captureIo();
    assert.equal(
      await events(["query", ...scope, "--kind", "nope"], text),
      0,
    );
    assert.match(
      text.stdout(),
      /^0 events; no more\n.*\nno stored event of application app-1 has kind nope; kinds stored there: memory_search, retrieval\n$/,
    );
    const json = captureIo();
    await events(
      [
        "query",
        ...scope,
        "--kind",
        "tool_call",
        "--kind",
        "retrieval",
        "--json",
      ],
      json,
    );
    const page = JSON.parse(json.stdout());
    assert.equal(page.events.length, 1);
    assert.equal(page.kinds_absent, undefined);
    const empty = captureIo();
    await events(
      ["query", ...scope, "--kind", "tool_call", "--kind", "ghost", "--json"],
      empty,
    );
    assert.deepEqual(JSON.parse(empty.stdout()).kinds_absent, {
      absent: ["tool_call", "ghost"],
      held: ["memory_search", "retrieval"],
      held_partial: false,
    });
    // A kind that is there but that the other filters exclude: no such words.
    const filtered = captureIo();
    await events(
      ["query", ...scope, "--kind", "retrieval", "--thread", "other"],
      filtered,
    );
    assert.doesNotMatch(filtered.stdout(), /no stored event/);
    const nothing = captureIo();
    await events([
      "query",
      "--user",
      "u9",
      "--kind",
      "retrieval",
      "--data-dir",
      dir,
    ], nothing);
    assert.match(
      nothing.stdout(),
      /no stored event of user u9 has kind retrieval; no event of user u9 is stored at all\n$/,
    );
  });
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { captureIo, exists, withTempDir } from "./_helpers.ts";
import { loadCommand, main } from "../cli.ts";
import { MAX_EVENTS_FILE_BYTES } from "../cli/events.ts";
import type { CliIo } from "../cli/_io.ts";

async function events(args: string[], io: CliIo): Promise<number> {
  const loaded = await loadCommand(["events", ...args]);
  return await loaded.command(loaded.args, io);
}
import { openDb } from "../lib/db.ts";
import {
  IngestBatchError,
  IngestConflictError,
  liveCheckpointWorkers,
  MAX_BATCH_EVENTS,
} from "../lib/obs/ingest/mod.ts";

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

Deno.test("events ingest/query/export/summary work end to end on a fresh data dir", async () => {
  await withTempDir(async (dir) => {
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
      ok: true,
      inserted: 3,
      duplicates: 0,
      lines: 3,
      batches: 1,
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
    assert.match(human.stdout(), /retrieval {7}unset {2}e1 {2}root=e1/);
    assert.match(human.stdout(), /\n1 event; no more\n/);
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

/** Ingests `lines` into `dataDir` and returns what `events export` then writes. */
async function ingestedThenExported(
  dataDir: string,
  lines: string[],
): Promise<string> {
  const stdin = lines.join("\n");
  assert.equal(
    await events(["ingest", "-", "--data-dir", dataDir], captureIo(stdin)),
    0,
  );
  const exported = captureIo();
  assert.equal(await events(["export", "--data-dir", dataDir], exported), 0);
  return exported.stdout();
}

Deno.test("events ingest reads what events export wrote into a fresh data dir", async () => {
  await withTempDir(async (dir) => {
    const source = join(dir, "source");
    const copy = join(dir, "copy");
    const exported = await ingestedThenExported(source, [
      line(1, { preview: "cli-secret" }),
      line(2),
    ]);
    const ingest = captureIo(exported);
    assert.equal(
      await events(["ingest", "-", "--data-dir", copy, "--json"], ingest),
      0,
      ingest.stdout(),
    );
    assert.equal(JSON.parse(ingest.stdout()).inserted, 2);
    const again = captureIo();
    await events(["export", "--data-dir", copy], again);
    const metadata = (text: string) =>
      text.trim().split("\n").map((l) => {
        const { seq: _s, received_at: _r, preview: _p, ...rest } = JSON.parse(
          l,
        );
        return rest;
      });
    assert.deepEqual(metadata(again.stdout()), metadata(exported));
    // The export holds no content, so the copy holds no preview.
    assert.ok(
      again.stdout().split("\n").every((l) =>
        !l || JSON.parse(l).preview === null
      ),
    );
  });
});

Deno.test("events ingest of an export into its own data dir says the event is stored here and the line holds no preview", async () => {
  await withTempDir(async (dir) => {
    const exported = await ingestedThenExported(dir, [
      line(1, { preview: "cli-secret" }),
      line(2),
    ]);
    const again = captureIo(exported);
    assert.equal(
      await main(["events", "ingest", "-", "--data-dir", dir, "--json"], again),
      2,
    );
    const { error } = JSON.parse(again.stdout());
    assert.equal(error.code, "conflict");
    assert.equal(
      error.message,
      "Cannot ingest the batch: 1 event listed in items is already stored here, with a preview its export line does not hold; read an export into another data directory",
    );
    assert.deepEqual(error.items, [{
      line: 1,
      field: "event_id",
      message:
        '"e1" is already stored here, and this export line holds no preview (an export carries its size, never its text); ingest an export into another data directory',
    }]);
    // A line that is no export still hears that a change needs a new event_id.
    const changed = captureIo(line(1, { kind: "selection" }));
    assert.equal(
      await main(["events", "ingest", "-", "--data-dir", dir], changed),
      2,
    );
    assert.match(changed.stderr(), /already stored with a different payload/);
    assert.match(changed.stderr(), /needs a new event_id/);
  });
});

Deno.test("events ingest of an export in batches names a later batch's line that holds no preview as an export line", async () => {
  await withTempDir(async (dir) => {
    // Exported in time order: the event with a preview is line 2.
    const exported = await ingestedThenExported(dir, [
      line(2),
      line(1, { preview: "cli-secret", started_at: "2026-09-01T00:00:05Z" }),
    ]);
    const again = captureIo(exported);
    assert.equal(
      await main(
        ["events", "ingest", "-", "--batch-size", "1", "--data-dir", dir],
        again,
      ),
      2,
    );
    assert.match(
      again.stderr(),
      /line 2: event_id: "e1" is already stored here, and this export line holds no preview/,
    );
  });
});

Deno.test("events ingest still refuses a read-side field on a line that is not an export", async () => {
  await withTempDir(async (dir) => {
    const io = captureIo(line(1, { ts: "2026-09-01T00:00:00Z" }));
    assert.equal(
      await main(["events", "ingest", "-", "--data-dir", dir], io),
      2,
    );
    assert.match(io.stderr(), /line 1: ts: unknown key; remove it/);
  });
});
Deno.test("events ingest reports every refused line by number and writes nothing", async () => {
  await withTempDir(async (dir) => {
    const io = captureIo(
      [line(1), "{nope", "[1, 2]", line(4, { kind: "" })].join("\n"),
    );
    const refused = await events(
      ["ingest", "-", "--data-dir", dir, "--batch-size", "1"],
      io,
    ).catch((e) => e);
    assert.ok(refused.cause instanceof IngestBatchError);
    assert.equal(
      refused.message,
      "Cannot ingest the batch: 3 events refused (each listed above); fix them and resend the whole batch",
      "the summary does not repeat a listed line",
    );
    assert.equal(
      io.stderr(),
      [
        "  line 2: is not valid JSON (column 2: expected a string key)",
        "  line 3: must be a JSON object; NDJSON holds one event object per line, not an array",
        "  line 4: kind: must be a lower-case token (a-z, 0-9, _ . : -), at most 64 characters",
        "",
      ].join("\n"),
      "a line that is not JSON does not hide the event rules of the others",
    );
    const valid = captureIo([line(1), line(2, { kind: "" })].join("\n"));
    await assert.rejects(
      events(["ingest", "-", "--data-dir", dir, "--batch-size", "1"], valid),
      /1 event refused \(each listed above\)/,
    );
    assert.match(
      valid.stderr(),
      /^ {2}line 2: kind: must be a lower-case token/,
    );
    assert.ok(
      !(await exists(join(dir, "trace.db"))),
      "a refused file writes nothing, not even batch 1",
    );
  });
});

Deno.test("events ingest --batch-size says which lines were written before a failure", async () => {
  await withTempDir(async (dir) => {
    await events(["ingest", "-", "--data-dir", dir], captureIo(line(3)));
    const io = captureIo(
      [line(1), "", line(2), line(3, { status: "error" })].join("\n"),
    );
    const error = await events(
      ["ingest", "-", "--data-dir", dir, "--batch-size", "2"],
      io,
    ).catch((e) => e);
    assert.ok(error.cause instanceof IngestConflictError);
    assert.match(io.stderr(), /line 4: event_id: "e3" is already stored/);
    assert.match(
      io.stderr(),
      /Lines 1-3 were written in 1 earlier batch \(2 new events\); after fixing, resend from line 4\n$/,
    );
    const query = captureIo();
    await events(["query", "--json", "--data-dir", dir], query);
    assert.equal(JSON.parse(query.stdout()).events.length, 3);
  });
});

/**
 * Captured streams whose Ctrl-C arrives while batch `at` (1-based) is
 * written: the command sets its exit note just before each batch. Keeps
 * every note set, and counts the reads of the signal (reading it installs
 * the handlers that keep a Ctrl-C from ending the process).
 */
function ctrlCDuringBatch(stdin: string, at: number) {
  const ctrlC = new AbortController();
  const notes: (string | null)[] = [];
  let reads = 0;
  const io = {
    ...captureIo(stdin),
    get interrupted() {
      reads += 1;
      return ctrlC.signal;
    },
    setExitNote(note: string | null) {
      notes.push(note);
      if (notes.filter((n) => n?.includes("in flight")).length === at) {
        ctrlC.abort();
      }
    },
  };
  return { io, notes, reads: () => reads };
}

const RESUME =
  "run the same command again to write the rest: events already written are skipped as identical retries";

Deno.test("events ingest --batch-size stops between batches at Ctrl-C and says which lines are written", async () => {
  await withTempDir(async (dir) => {
    const stdin = [line(1), line(2), line(3), line(4)].join("\n");
    const args = ["ingest", "-", "--data-dir", dir, "--batch-size", "1"];
    const { io, notes } = ctrlCDuringBatch(stdin, 2);
    assert.equal(await events(args, io), 2);
    assert.equal(
      io.stderr(),
      `trace events ingest: Interrupted: lines 1-2 are written (2 new events); ${RESUME}\n`,
    );
    assert.equal(io.stdout(), "");
    assert.deepEqual(
      notes,
      [
        `no line is written, and perhaps the batch in flight; ${RESUME}`,
        `lines 1-1 are written (1 new event), and perhaps the batch in flight; ${RESUME}`,
        `lines 1-2 are written (2 new events); ${RESUME}`,
        null,
      ],
      "a second Ctrl-C exits naming the lines written, until the answer is out",
    );

    const json = ctrlCDuringBatch(stdin, 3);
    assert.equal(await events([...args, "--json"], json.io), 2);
    assert.deepEqual(JSON.parse(json.io.stdout()), {
      ok: false,
      error: {
        code: "interrupted",
        message: `Interrupted: lines 1-3 are written (1 new event); ${RESUME}`,
        items: [],
        unlisted_items: 0,
      },
      written_lines: 3,
    });

    const again = ctrlCDuringBatch(stdin, Infinity);
    assert.equal(await events(args, again.io), 0);
    assert.equal(
      again.io.stdout(),
      "Ingested 1 event (3 identical retries skipped)\n",
    );
    assert.deepEqual(
      again.notes.slice(-2),
      ["every line is written (1 new event)", null],
    );
  });
});

Deno.test("events ingest --json answers a second Ctrl-C in the shape of the first", async () => {
  await withTempDir(async (dir) => {
    const stdin = [line(1), line(2), line(3)].join("\n");
    const { io, notes } = ctrlCDuringBatch(stdin, 2);
    // What the process prints as a second Ctrl-C ends it (processIo runs
    // these hooks, then exits), pressed while batch 2 is in flight.
    const hooks: ((note: string | null) => void)[] = [];
    let atExit = "";
    const twice = {
      ...io,
      onExitAtOnce: (hook: (note: string | null) => void) =>
        void hooks.push(hook),
      setExitNote(note: string | null) {
        io.setExitNote(note);
        if (notes.filter((n) => n?.includes("in flight")).length !== 2) return;
        if (atExit !== "" || note === null) return;
        for (const hook of hooks) hook(note);
        atExit = io.stdout();
      },
    };
    await main(
      [
        "events",
        "ingest",
        "-",
        "--json",
        "--batch-size",
        "1",
        "--data-dir",
        dir,
      ],
      twice,
    );
    assert.deepEqual(JSON.parse(atExit), {
      ok: false,
      error: {
        code: "interrupted",
        message:
          `Interrupted again: lines 1-1 are written (1 new event), and perhaps the batch in flight; ${RESUME}`,
        items: [],
        unlisted_items: 0,
      },
      written_lines: 1,
    });
  });
});

Deno.test("events ingest leaves Ctrl-C alone for a file that is one batch", async () => {
  await withTempDir(async (dir) => {
    const { io, notes, reads } = ctrlCDuringBatch(line(1), 1);
    const args = ["ingest", "-", "--data-dir", dir, "--batch-size", "5"];
    assert.equal(await events(args, io), 0);
    assert.equal(reads(), 0, "no handler keeps Ctrl-C from ending it");
    assert.deepEqual(notes.filter((note) => note !== null), []);
  });
});

Deno.test("events ingest writes a file of 20,000 events in batches while a worker copies the WAL, and ends it", async () => {
  await withTempDir(async (dir) => {
    const lines = Array.from({ length: 20_000 }, (_, i) => line(i));
    const workers: number[] = [];
    const io = {
      ...captureIo(lines.join("\n")),
      setExitNote: () => void workers.push(liveCheckpointWorkers()),
    };
    const args = ["ingest", "-", "--data-dir", dir, "--batch-size", "5000"];
    assert.equal(await events([...args, "--json"], io), 0);
    assert.deepEqual(
      workers,
      [1, 1, 1, 1, 1, 0],
      "one worker through every batch, ended before the answer",
    );
    assert.deepEqual(JSON.parse(io.stdout()), {
      ok: true,
      inserted: 20_000,
      duplicates: 0,
      lines: 20_000,
      batches: 4,
    });
  });
});

Deno.test("events ingest names --batch-size for a file larger than one batch, and bounds the flag", async () => {
  await withTempDir(async (dir) => {
    const lines = Array.from(
      { length: MAX_BATCH_EVENTS + 1 },
      (_, i) => line(i),
    );
    const whole = captureIo(lines.join("\n"));
    await assert.rejects(
      events(["ingest", "-", "--data-dir", dir], whole),
      new RegExp(
        `^ConfigError: Cannot ingest standard input: its ${
          MAX_BATCH_EVENTS + 1
        } events are more than one batch holds \\(${MAX_BATCH_EVENTS}\\); pass --batch-size ${MAX_BATCH_EVENTS} or less to write it in batches$`,
      ),
    );
    assert.ok(!(await exists(join(dir, "trace.db"))), "nothing written");
    await assert.rejects(
      events(
        [
          "ingest",
          "-",
          "--data-dir",
          dir,
          "--batch-size",
          `${MAX_BATCH_EVENTS + 1}`,
        ],
        captureIo(line(1)),
      ),
      new RegExp(
        `--batch-size must be a whole number from 1 to ${MAX_BATCH_EVENTS}`,
      ),
    );
    const split = captureIo(lines.join("\n"));
    assert.equal(
      await events(
        [
          "ingest",
          "-",
          "--json",
          "--batch-size",
          `${MAX_BATCH_EVENTS}`,
          "--data-dir",
          dir,
        ],
        split,
      ),
      0,
    );
    assert.deepEqual(JSON.parse(split.stdout()), {
      ok: true,
      inserted: MAX_BATCH_EVENTS + 1,
      duplicates: 0,
      lines: MAX_BATCH_EVENTS + 1,
      batches: 2,
    });
  });
});

Deno.test("events ingest refuses an id the file repeats with another payload before writing any batch", async () => {
  await withTempDir(async (dir) => {
    const io = captureIo(
      [line(1), line(2), line(3), line(1, { kind: "changed" })].join("\n"),
    );
    const error = await events(
      ["ingest", "-", "--data-dir", dir, "--batch-size", "2"],
      io,
    ).catch((e) => e);
    assert.ok(error.cause instanceof IngestConflictError);
    assert.equal(
      error.message,
      "Cannot ingest the batch: 1 event listed above would change an event stored or sent earlier; a changed observation needs a new event_id",
    );
    assert.equal(
      io.stderr(),
      '  line 4: event_id: "e1" is repeated in this file with a different payload (lines 1 and 4)\n',
    );
    assert.ok(!(await exists(join(dir, "trace.db"))), "not even batch 1");
  });
});

Deno.test("events ingest reads every member of a gzip file", async () => {
  await withTempDir(async (dir) => {
    const gzip = async (text: string) =>
      new Uint8Array(
        await new Response(
          new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")),
        ).arrayBuffer(),
      );
    // `cat a.gz b.gz` is one valid gzip file of two members.
    const file = join(dir, "two.ndjson.gz");
    await Deno.writeFile(
      file,
      new Uint8Array([
        ...await gzip(line(1) + "\n"),
        ...await gzip(line(2) + "\n"),
      ]),
    );
    const io = captureIo();
    assert.equal(
      await events(["ingest", file, "--json", "--data-dir", dir], io),
      0,
    );
    assert.equal(JSON.parse(io.stdout()).inserted, 2);
  });
});

Deno.test("events ingest stops reading a file, stdin or gzip past its bound", async () => {
  await withTempDir(async (dir) => {
    // 257 MiB of newlines in a quarter megabyte of gzip.
    const bomb = join(dir, "bomb.ndjson.gz");
    const newlines = new Uint8Array(1024 * 1024).fill(10);
    const chunks = ReadableStream.from(
      (function* () {
        for (let i = 0; i < MAX_EVENTS_FILE_BYTES / newlines.length + 1; i++) {
          yield newlines;
        }
      })(),
    );
    await Deno.writeFile(
      bomb,
      chunks.pipeThrough(new CompressionStream("gzip")),
    );
    await assert.rejects(
      events(["ingest", bomb, "--data-dir", dir], captureIo()),
      new RegExp(
        `Cannot read .*bomb\\.ndjson\\.gz: it holds more than 256 MiB of NDJSON; split it into smaller files$`,
      ),
    );
    assert.ok(!(await exists(join(dir, "trace.db"))), "nothing written");
  });
});

Deno.test("events ingest --json prints one object on stdout for a refused batch", async () => {
  await withTempDir(async (dir) => {
    const io = captureIo(JSON.stringify({ event_id: "e-5" }));
    const code = await main(
      ["events", "ingest", "-", "--json", "--data-dir", dir],
      io,
    );
    assert.equal(code, 2);
    assert.deepEqual(JSON.parse(io.stdout()), {
      ok: false,
      error: {
        code: "config_invalid",
        message:
          "Cannot ingest the batch: 1 event refused (each listed in items); fix them and resend the whole batch",
        items: [{ line: 1, field: "application_id", message: "is required" }],
        unlisted_items: 0,
      },
      written_lines: 0,
    });
    const split = captureIo(
      [line(1), line(2), line(1, { kind: "x" })].join("\n"),
    );
    await events(["ingest", "-", "--data-dir", dir], captureIo(line(1)));
    const partial = await events(
      ["ingest", "-", "--json", "--batch-size", "2", "--data-dir", dir],
      split,
    ).catch((e) => e);
    assert.ok(
      partial.cause instanceof IngestConflictError,
      String(partial?.stack ?? partial),
    );
    const body = JSON.parse(split.stdout());
    assert.equal(body.ok, false);
    // Line 3 repeats line 1's id with another payload: refused before batch 1.
    assert.equal(body.written_lines, 0);
    assert.deepEqual(body.error.items.map((i: { line: number }) => i.line), [
      3,
    ]);
  });
});

Deno.test("events ingest --json answers a refused flag or argument in the shape of every refusal", async () => {
  await withTempDir(async (dir) => {
    for (
      const [args, message] of [
        [
          ["-", "--batch-size", "abc"],
          '--batch-size must be a whole number from 1 to 50000, got "abc"',
        ],
        [
          ["-", "--bogus"],
          "Unknown option '--bogus'; see trace events ingest --help",
        ],
        [[], "Missing FILE (or - for stdin); see trace events ingest --help"],
      ] as const
    ) {
      const io = captureIo(line(1));
      const code = await main(
        ["events", "ingest", ...args, "--json", "--data-dir", dir],
        io,
      );
      assert.equal(code, 2);
      // One object, not a second generic one after it.
      assert.deepEqual(JSON.parse(io.stdout()), {
        ok: false,
        error: { code: "usage", message, items: [], unlisted_items: 0 },
        written_lines: 0,
      });
      assert.equal(io.stderr(), `trace events ingest: ${message}\n`);
    }
    assert.ok(!(await exists(join(dir, "trace.db"))), "nothing written");
  });
});

Deno.test("events ingest names a missing file and what to do", async () => {
  const io = captureIo();
  assert.equal(
    await main(["events", "ingest", "/nonexistent/events.ndjson"], io),
    2,
  );
  assert.equal(
    io.stderr(),
    "trace events ingest: Cannot read /nonexistent/events.ndjson: no such file; check the path\n",
  );
});

Deno.test("events query names the flag a bad value came from", async () => {
  await withTempDir(async (dir) => {
    const since = captureIo();
    assert.equal(
      await main(
        ["events", "query", "--since", "yesterday", "--data-dir", dir],
        since,
      ),
      2,
    );
    assert.match(
      since.stderr(),
      /^trace events query: Invalid trace query: --since: must be an ISO 8601 timestamp/,
    );
    const type = captureIo();
    await main(["events", "summary", "--resource-type", "doc"], type);
    assert.equal(
      type.stderr(),
      "trace events summary: Invalid trace query: --resource-type needs --resource\n",
    );
    const sub = captureIo();
    await main(["events", "bogus"], sub);
    assert.equal(
      sub.stderr(),
      'trace events: unknown command "bogus"; run trace events --help for the list\n',
    );
  });
});

Deno.test("events export refuses an unknown store", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      events(
        ["export", "--store", "everything", "--data-dir", dir],
        captureIo(),
      ),
      /^UsageError: Invalid trace query: --store: must be one of/,
    );
  });
});

Deno.test("events query never creates a database, and needs an initialized index", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      events(["query", "--data-dir", dir], captureIo()),
      /No Trace data at .*trace\.db yet/,
    );
    assert.ok(!(await exists(join(dir, "trace.db"))));
    (await openDb({ dataDir: dir })).close();
    await assert.rejects(
      events(["summary", "--data-dir", dir], captureIo()),
      /run trace obs init first/,
    );
  });
});

Deno.test("events commands honour TRACE_DB_URL", async () => {
  await withTempDir(async (dir) => {
    const url = `file:${join(dir, "elsewhere.db")}`;
    const env = { TRACE_DB_URL: url, TRACE_DATA_DIR: join(dir, "unused") };
    await events(["ingest", "-"], captureIo(line(1), env));
    const query = captureIo("", env);
    await events(["query", "--json"], query);
    assert.equal(JSON.parse(query.stdout()).events.length, 1);
    assert.ok(await exists(join(dir, "elsewhere.db")));
    assert.ok(!(await exists(join(dir, "unused"))));
  });
});

Deno.test("events export ends quietly with 0 when stdout is closed", async () => {
  await withTempDir(async (dir) => {
    await events(
      ["ingest", "-", "--data-dir", dir],
      captureIo([line(1), line(2)].join("\n")),
    );
    const io = captureIo();
    let writes = 0;
    io.out = () => {
      writes += 1;
      throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
    };
    assert.equal(await main(["events", "export", "--data-dir", dir], io), 0);
    assert.equal(writes, 1);
    assert.equal(io.stderr(), "");
  });
});

Deno.test("events ingest names a byte-order mark past the first line as such, with its line", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "joined.ndjson");
    // Two files saved with a mark, joined: the first mark is dropped on read.
    await Deno.writeTextFile(
      file,
      `\ufeff${line(1)}\n\ufeff${line(2)}\n${line(3)}\ufeff\n`,
    );
    const io = captureIo();
    assert.equal(
      await main(["events", "ingest", file, "--data-dir", `${dir}/data`], io),
      2,
    );
    assert.equal(
      io.stderr().split("\n").slice(0, 2).join("\n"),
      "  line 2: starts with a byte-order mark (U+FEFF); only the first line of a file may start with one, so remove it (files joined with cat keep each part's mark; save the parts as UTF-8 without BOM)\n" +
        `  line 3: is not valid JSON (column ${
          line(3).length + 1
        }: a byte-order mark, U+FEFF, outside a string); remove it`,
    );
  });
});

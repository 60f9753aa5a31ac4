/** Progress on stderr: plain lines off a terminal, one live line on a terminal. */

import assert from "node:assert/strict";
import {
  leftoversPollLine,
  progressNote,
  progressRenderer,
} from "../cli/_progress.ts";
import { renderReport } from "../cli/_report_text.ts";
import type { RunEvent } from "../lib/runner/events.ts";
import { runFake, VirtualClock } from "./_fake_target.ts";
import { captureIo, stagingConfig } from "./_helpers.ts";

Deno.test("progressRenderer() prints one plain line per phase, sample and cleanup poll off a terminal", async () => {
  const io = captureIo();
  await runFake({ onEvent: progressRenderer(io) });
  const lines = io.stderr().split("\n").filter((l) => l !== "");
  assert.ok(lines.every((l) => l.startsWith("progress: ")), io.stderr());
  assert.ok(
    !io.stderr().includes("\r") && !io.stderr().includes("\u001b"),
    "no terminal control sequence in a log",
  );
  assert.deepEqual(lines.slice(0, 4), [
    "progress: ingesting the canaries and the control record",
    "progress: reading the baseline (the queries warm the caches)",
    "progress: deleting the canaries",
    "progress: sampling through the deletion window",
  ]);
  const samples = lines.filter((l) => l.startsWith("progress: sample #"));
  assert.equal(samples.length, 5);
  assert.equal(
    samples[0],
    "progress: sample #0 at 0.00 s of the 2 s window: source 0, vector 0, cache 0; marker gone; control ok",
  );
  assert.ok(
    lines.includes(
      "progress: cleanup: deleting every issued id, then polling both namespaces until clean, for at most 2 s",
    ),
  );
  assert.match(
    io.stderr(),
    /progress: cleanup poll #1 at 0\.\d\d s of at most 2 s: clean\n/,
  );
  assert.equal(lines.at(-1), "progress: cleanup complete after 1 poll(s)");
});

Deno.test("progressRenderer() says at once what an interrupt stops and how long cleanup may take", async () => {
  const io = captureIo();
  const render = progressRenderer(io);
  const controller = new AbortController();
  await runFake({
    behaviour: { staleCache: true },
    signal: controller.signal,
    onEvent: (event) => {
      render(event);
      if (event.type === "sample" && event.sample.index === 1) {
        controller.abort();
      }
    },
  });
  const text = io.stderr();
  assert.match(
    text,
    /progress: sample #1 at 0\.50 s of the 2 s window: source 0, vector 0, cache 1; marker SEEN; control ok\nprogress: interrupted during window: no verdict without the final sample; stopping within 8 s, cleanup included \(requests end by 2 s, then cleanup's deletions and last poll get at most 1 s per request\) \(Ctrl-C again exits at once\)\n/,
  );
  // What is left of the 2 s: the interrupt came between samples, so nearly all.
  assert.match(
    text,
    /progress: cleanup: deleting every issued id, then polling both namespaces until clean, for at most 2 s \(what is left after the interrupt\)\n/,
  );
  assert.match(
    text,
    /cleanup poll #\d+ at \d\.\d\d s of at most 2 s: not clean yet\n/,
  );
});

Deno.test("progressRenderer() tells how long is left after an interrupt when the request in flight took part of it", async (t) => {
  const cases: [number, RegExp][] = [
    [
      20_000,
      /progress: cleanup: deleting every issued id, then polling both namespaces until clean, for at most 10 s \(what is left after the interrupt\)\n/,
    ],
    [
      40_000,
      /progress: cleanup: the time allowed after the interrupt has run out; deleting every issued id and polling once, each request given at most 1 s\n/,
    ],
  ];
  for (const [answerMs, cleanupLine] of cases) {
    await t.step(`an answer ${answerMs / 1000} s late`, async () => {
      const io = captureIo();
      const clock = new VirtualClock();
      const controller = new AbortController();
      await runFake({
        config: stagingConfig({
          deletion_window_seconds: 3600,
          sample_interval_seconds: 1,
        }),
        behaviour: { staleCache: true },
        clock,
        signal: controller.signal,
        onEvent: progressRenderer(io),
        hook: (request, forward) => {
          if (request.sample === 1 && !controller.signal.aborted) {
            controller.abort();
            clock.advance(answerMs);
          }
          return forward();
        },
      });
      assert.match(
        io.stderr(),
        /progress: interrupted during window: no verdict without the final sample; stopping within 36 s, cleanup included \(requests end by 30 s, then cleanup's deletions and last poll get at most 1 s per request\) \(Ctrl-C again exits at once\)\n/,
      );
      assert.match(io.stderr(), cleanupLine);
    });
  }
});

Deno.test("progressRenderer() keeps one live line on a terminal", async () => {
  const io = { ...captureIo(), stderrIsTerminal: true };
  await runFake({ onEvent: progressRenderer(io) });
  // The live line is rewritten in place: carriage return, then erase the line.
  const text = io.stderr().replaceAll("\r\u001b[2K", "<rewrite>");
  assert.match(text, /<rewrite>window \[#+-*\] sample #4 at 2\.00 s/);
  assert.match(text, /<rewrite>cleanup \[[#-]+\] cleanup poll #1/);
  assert.doesNotMatch(text, /progress: /);
  assert.doesNotMatch(text, /\n/, "no line of its own without an interrupt");
});

Deno.test("renderReport() marks a rendered marker in the sample table and says what it means", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.op === "query" && request.stage === "window" &&
        request.role === "test"
        ? Promise.resolve({
          text: String(request.body.query).replaceAll("_", "&lowbar;"),
        })
        : forward(),
  });
  const text = renderReport(report);
  assert.match(text, /\n {2}4 {2}2\.00 {3}0 {7}0 {7}0 {6}RENDERED {2}ok\n/);
  assert.match(
    text,
    /RENDERED: the answer carried the marker in another spelling \(HTML entities\), which counts as retrievable/,
  );
  assert.match(text, /rendered with HTML entities rather than byte for byte/);
});

Deno.test("renderReport() says an interrupted run took no sample when it stopped before the window", async () => {
  const controller = new AbortController();
  const { report } = await runFake({
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "phase" && event.phase === "delete") {
        controller.abort();
      }
    },
  });
  const text = renderReport(report);
  assert.match(text, /^INCONCLUSIVE {2}run-\S+ {2}\(interrupted\)\n/);
  assert.match(
    text,
    /No samples: the run was interrupted before its deletion window began\./,
  );
});

Deno.test("progressRenderer() says when records came back after a clean poll and are deleted again", () => {
  const io = captureIo();
  progressRenderer(io)({
    type: "cleanup_poll",
    poll: 2,
    at_seconds: 0.5,
    limit_seconds: 3,
    clean: false,
    deleted_again: ["control"],
  });
  assert.equal(
    io.stderr(),
    "progress: cleanup poll #2 at 0.50 s of at most 3 s: not clean yet; records came back in the control namespace after a clean poll, deleting them again\n",
  );
});

Deno.test("progressNote() clears a live progress line before a line of its own, and writes a plain line elsewhere", () => {
  const terminal = { ...captureIo(), stderrIsTerminal: true };
  progressNote(terminal, "checkpoint: /data/external/run-1.json");
  assert.equal(
    terminal.stderr(),
    "\r\u001b[2Kcheckpoint: /data/external/run-1.json\n",
  );
  const log = captureIo();
  progressNote(log, "checkpoint: /data/external/run-1.json");
  assert.equal(log.stderr(), "checkpoint: /data/external/run-1.json\n");
});

Deno.test("renderReport() counts the cleanup deletions repeated because records came back", async () => {
  const { report } = await runFake();
  const control = report.cleanup.deletes.find((d) =>
    d.namespace === "control"
  )!;
  const text = renderReport({
    ...report,
    cleanup: {
      ...report.cleanup,
      deletes: [...report.cleanup.deletes, control],
    },
  });
  assert.match(
    text,
    /\nCleanup {2}complete \(cleanup_complete: true\); 3\/3 delete request\(s\) acknowledged \(1 repeated: records came back after a clean poll\), 4\/4 id\(s\) deleted, /,
  );
  assert.doesNotMatch(renderReport(report), /repeated/);
});

Deno.test("progressRenderer() never prints a poll limit of 0 s: a poll past the limit is named the last", () => {
  const io = captureIo();
  const render = progressRenderer(io);
  render({
    type: "cleanup_poll",
    poll: 1,
    at_seconds: 1,
    limit_seconds: 0,
    clean: false,
    deleted_again: [],
  });
  render({
    type: "cleanup_poll",
    poll: 3,
    at_seconds: 4.2,
    limit_seconds: 4,
    clean: false,
    deleted_again: [],
  });
  assert.equal(
    io.stderr(),
    "progress: cleanup poll #1, the last, at 1.00 s (no polling time was left after the interrupt): not clean yet\n" +
      "progress: cleanup poll #3, the last, at 4.20 s (limit 4 s, overrun by the requests before it): not clean yet\n",
  );
});

Deno.test("an interrupted run whose cleanup poll runs past the bound polls no more, and the progress line named that time", async () => {
  const io = captureIo();
  const clock = new VirtualClock();
  const controller = new AbortController();
  let interruptedAt = 0;
  const { report } = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 3600,
      sample_interval_seconds: 1,
    }),
    behaviour: { staleCache: true },
    clock,
    signal: controller.signal,
    onEvent: progressRenderer(io),
    hook: (request, forward) => {
      if (request.sample === 1 && !controller.signal.aborted) {
        controller.abort();
        interruptedAt = clock.now();
        // The request in flight uses 27 s of the 30 s bound.
        clock.advance(27_000);
      }
      // A slow adapter: each cleanup request takes the second it is given past the bound.
      if (request.stage === "cleanup") clock.advance(1_000);
      return forward();
    },
  });
  assert.equal(report.state, "interrupted");
  // Deletions end before the bound; the poll that starts then ends past it and is the last.
  assert.equal(report.cleanup.polls, 1);
  const printed = /stopping within (\d+) s/.exec(io.stderr())?.[1];
  assert.equal(printed, "36");
  assert.ok(
    clock.now() - interruptedAt <= Number(printed) * 1000,
    `${clock.now() - interruptedAt} ms`,
  );
  assert.doesNotMatch(io.stderr(), /of at most 0 s/);
});

Deno.test("a cleanup poll that starts past its limit is numbered from 1 and named the last, overrun by the requests before it", () => {
  const overrun: RunEvent = {
    type: "cleanup_poll",
    poll: 1,
    at_seconds: 12.93,
    limit_seconds: 10,
    clean: false,
    deleted_again: [],
  };
  const log = captureIo();
  progressRenderer(log)(overrun);
  assert.equal(
    log.stderr(),
    "progress: cleanup poll #1, the last, at 12.93 s (limit 10 s, overrun by the requests before it): not clean yet\n",
  );
  const terminal = { ...captureIo(), stderrIsTerminal: true };
  progressRenderer(terminal)(overrun);
  assert.match(
    terminal.stderr(),
    /cleanup \[#{20}\] cleanup poll #1, the last, at 12\.93 s \(limit 10 s, overrun by the requests before it\)/,
  );
  // A poll right at the limit ran out of time, nothing more.
  const atLimit = captureIo();
  progressRenderer(atLimit)({
    type: "cleanup_poll",
    poll: 4,
    at_seconds: 10,
    limit_seconds: 10,
    clean: false,
    deleted_again: [],
  });
  assert.equal(
    atLimit.stderr(),
    "progress: cleanup poll #4, the last, at 10.00 s (polling time ran out at 10 s): not clean yet\n",
  );
});

Deno.test("leftoversPollLine() numbers external-cleanup's polls from 1 and says when one starts past the window", () => {
  const counts = {
    source_records: 0,
    vector_records: 0,
    cache_records: 1,
    complete: true,
  };
  const poll = {
    index: 0,
    started_at_seconds: 12.93,
    window_seconds: 10,
    remaining: { test: counts, control: null },
    marker_seen: { test: true, control: false },
  };
  assert.equal(
    leftoversPollLine(poll),
    "cleanup poll #1, the last, at 12.93 s (limit 10 s, overrun by the requests before it): test 0/0/1, control unknown (source/vector/cache); test marker retrievable\n",
  );
  assert.equal(
    leftoversPollLine({ ...poll, index: 2, started_at_seconds: 1.5 }),
    "cleanup poll #3 at 1.50 s of at most 10 s: test 0/0/1, control unknown (source/vector/cache); test marker retrievable\n",
  );
});

Deno.test("a control namespace that grew after the deletion reads GREW in the progress line and the samples table", async () => {
  const io = captureIo();
  const { report } = await runFake({
    behaviour: { moveToControl: true },
    onEvent: progressRenderer(io),
  });
  const samples = io.stderr().split("\n").filter((l) =>
    l.startsWith("progress: sample #")
  );
  assert.ok(samples.length > 0);
  assert.ok(samples.every((l) => l.endsWith("; control GREW")), io.stderr());
  const rows = renderReport(report).split("\n").filter((l) =>
    /^\s+\d+\s+\d+\.\d\d\s/.test(l)
  );
  assert.equal(rows.length, report.samples.length);
  assert.ok(
    rows.every((row) => row.trimEnd().endsWith("GREW")),
    rows.join("\n"),
  );
});

/**
 * Interrupts: an interrupted window is INCONCLUSIVE with state `interrupted`,
 * and the cleanup polling after an interrupt is bounded by the smaller of the
 * window and 30 s, announced and reported poll by poll; so is the request in
 * flight when the interrupt arrives, against an adapter that hangs.
 */

import assert from "node:assert/strict";
import type { RunEvent } from "../lib/runner/events.ts";
import { familyResults } from "../lib/runner/families.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import {
  FakeTarget,
  type InterceptedRequest,
  runFake,
  timeoutError,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

/** Aborts once sample `index` has been taken. */
function interruptAtSample(index: number) {
  const controller = new AbortController();
  return {
    signal: controller.signal,
    onEvent: (event: RunEvent) => {
      if (event.type === "sample" && event.sample.index === index) {
        controller.abort();
      }
    },
  };
}

const ofType = <T extends RunEvent["type"]>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

Deno.test("an interrupt in an hour-long window bounds cleanup polling to 30 s", async () => {
  const { report, events } = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 3600,
      sample_interval_seconds: 1,
    }),
    // Never clean: without the bound, cleanup would poll for the whole hour.
    behaviour: { staleCache: true },
    ...interruptAtSample(1),
  });
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.samples.length, 2);
  assert.equal(report.cleanup.interrupted, true);
  assert.equal(report.cleanup.limit_seconds, 30);
  assert.equal(report.cleanup.polls, 31);
  assert.ok(
    report.cleanup.elapsed_seconds < 31,
    `${report.cleanup.elapsed_seconds}`,
  );
  assert.equal(report.cleanup.cleanup_complete, false);
  assert.deepEqual(ofType(events, "interrupted").map((e) => e.phase), [
    "window",
  ]);
  assert.deepEqual(ofType(events, "cleanup_started"), [
    {
      type: "cleanup_started",
      limit_seconds: 30,
      settle_seconds: 0,
      interrupted: true,
    },
  ]);
  const polls = ofType(events, "cleanup_poll");
  assert.equal(polls.length, 31);
  assert.deepEqual(polls.map((p) => p.poll), polls.map((_, i) => i + 1));
  assert.ok(polls.every((p) => p.limit_seconds === 30 && !p.clean));
});

Deno.test("an interrupt in a short window bounds cleanup by the window", async () => {
  const { report } = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 10,
      sample_interval_seconds: 1,
    }),
    behaviour: { staleCache: true },
    ...interruptAtSample(0),
  });
  assert.equal(report.cleanup.limit_seconds, 10);
  assert.equal(report.cleanup.polls, 11);
});

Deno.test("without an interrupt cleanup polls through the whole window", async () => {
  const { report, events } = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 40,
      sample_interval_seconds: 1,
    }),
    behaviour: { staleCache: true },
  });
  assert.equal(report.state, "completed");
  assert.equal(report.verdict, "FAIL");
  assert.equal(report.cleanup.interrupted, false);
  assert.equal(report.cleanup.limit_seconds, 40);
  assert.equal(report.cleanup.polls, 41);
  assert.deepEqual(ofType(events, "interrupted"), []);
});

Deno.test("an interrupt during cleanup ends polling at most 30 s later and keeps the verdict", async () => {
  const controller = new AbortController();
  const { report, events } = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 3600,
      sample_interval_seconds: 1,
    }),
    behaviour: { staleCache: true },
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "cleanup_poll" && event.poll === 3) {
        controller.abort();
      }
    },
  });
  // The window ran to its final sample: its verdict stands.
  assert.equal(report.state, "completed");
  assert.equal(report.verdict, "FAIL");
  assert.equal(report.samples.length, 3601);
  assert.equal(report.cleanup.interrupted, true);
  assert.ok(
    report.cleanup.limit_seconds > 32 && report.cleanup.limit_seconds < 33,
    `${report.cleanup.limit_seconds}`,
  );
  assert.ok(report.cleanup.polls <= 34, `${report.cleanup.polls} polls`);
  assert.deepEqual(ofType(events, "interrupted").map((e) => e.phase), [
    "cleanup",
  ]);
});

Deno.test("an interrupted report judges only the families it could: sampled ones are errors", async () => {
  const { report } = await runFake({
    behaviour: { vectorDelayMs: 1_500 },
    ...interruptAtSample(1),
  });
  const status = Object.fromEntries(
    familyResults(report).map((r) => [r.family, r.status]),
  );
  assert.deepEqual(status, {
    baseline: "pass",
    "deletion.source_records": "error",
    "deletion.vector_records": "error",
    "deletion.cache_records": "error",
    retrieval: "error",
    control: "error",
    cleanup: "pass",
  });
  const finding = report.findings.find((f) => f.code === "interrupted")!;
  assert.deepEqual(finding.sample_indexes, [0, 1]);
  assert.equal(report.timing.final_sample_started_at_seconds, null);
});

Deno.test("an interrupt before the window leaves no samples and still cleans up", async () => {
  const controller = new AbortController();
  const { report } = await runFake({
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "phase" && event.phase === "baseline") {
        controller.abort();
      }
    },
  });
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.deletion, null);
  assert.deepEqual(report.samples, []);
  assert.match(
    report.findings.find((f) => f.code === "interrupted")!.message,
    /^The run was interrupted during baseline, before its final sample; cleanup still ran$/,
  );
  assert.equal(report.cleanup.cleanup_complete, true);
});

Deno.test("after an interrupt, cleanup's requests end with its polling bound, not at their operation's full timeout", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock, { staleCache: true });
  const controller = new AbortController();
  const budgets: { op: string; timeoutMs: number }[] = [];
  const report = await runDeletionContract(
    stagingConfig({
      deletion_window_seconds: 3600,
      sample_interval_seconds: 1,
      timeout_seconds: { ingest: 300, query: 300, inventory: 300, delete: 300 },
    }),
    {
      transport: {
        post: (op, body, options) => {
          if (controller.signal.aborted) {
            budgets.push({ op, timeoutMs: options.timeoutMs });
          }
          return target.post(op, body);
        },
      },
      target: { id: "fake", base_url: "http://127.0.0.1:1", source: "config" },
      checkpoint: memoryCheckpointSink(),
      clock,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "sample" && event.sample.index === 1) {
          controller.abort();
        }
      },
    },
  );
  assert.equal(report.cleanup.interrupted, true);
  assert.ok(budgets.some((b) => b.op === "delete"));
  for (const { op, timeoutMs } of budgets) {
    assert.ok(
      timeoutMs >= 1_000 && timeoutMs <= 30_000,
      `${op} got ${timeoutMs} ms`,
    );
  }
});

/** How long a hanging fake request takes to answer when nothing calls it off. */
const LATE_MS = 4_000;

/**
 * Answers only late (after {@link LATE_MS}, through `forward`), or fails at
 * once when the run calls the request off: an adapter that hangs.
 */
function hang(
  request: InterceptedRequest,
  forward: () => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => forward().then(resolve, reject), LATE_MS);
    request.signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(timeoutError(request.op));
    }, { once: true });
  });
}

/**
 * A run against an adapter that hangs on the requests `hangsOn` picks, with
 * a Ctrl-C as the first of them starts and every operation allowed 300 s:
 * the in-flight request must end with the 1 s window's bound instead.
 */
async function interruptWhileHanging(
  hangsOn: (request: InterceptedRequest) => boolean,
) {
  const controller = new AbortController();
  const calledOff: InterceptedRequest[] = [];
  const run = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 1,
      timeout_seconds: { ingest: 300, query: 300, inventory: 300, delete: 300 },
    }),
    signal: controller.signal,
    hook: (request, forward) => {
      if (!hangsOn(request) || controller.signal.aborted) return forward();
      controller.abort();
      request.signal?.addEventListener("abort", () => calledOff.push(request));
      return hang(request, forward);
    },
  });
  return { ...run, calledOff };
}

Deno.test("a Ctrl-C during an ingest to a hanging adapter calls the request off: interrupted, the ingest unconfirmed, cleanup incomplete", async () => {
  const { report, target, calledOff } = await interruptWhileHanging((r) =>
    r.op === "ingest" && r.role === "test"
  );
  assert.deepEqual(calledOff.map((r) => r.op), ["ingest"]);
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.match(
    report.findings.find((f) => f.code === "interrupted")!.message,
    /interrupted during ingest/,
  );
  assert.deepEqual(report.baseline.problems, [
    "ingest failed: no answer within the 1 s left after the interrupt, so the request was called off",
  ]);
  // The id was issued: cleanup deletes it, but cannot prove its write never lands.
  assert.equal(report.issued.test.length, 1);
  assert.ok(
    target.calls.some((c) =>
      c.op === "delete" &&
      (c.body.ids as string[]).includes(report.issued.test[0]!)
    ),
  );
  assert.equal(report.cleanup.cleanup_complete, false);
  assert.match(
    report.cleanup.problems.join("\n"),
    /an ingest was not acknowledged, so its write may still land/,
  );
});

Deno.test("a Ctrl-C during a window request to a hanging adapter ends that request with the bound, and the run is interrupted", async () => {
  const { report, calledOff } = await interruptWhileHanging((r) =>
    r.stage === "window" && r.sample === 1 && r.op === "inventory" &&
    r.role === "test"
  );
  assert.equal(calledOff.length, 1);
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
  const cut = report.samples[1]!.errors[0]!;
  assert.equal(cut.failure, "timeout");
  assert.match(
    cut.message,
    /after the interrupt, so the request was called off$/,
  );
  assert.deepEqual(
    report.findings.filter((f) => f.severity === "inconclusive").map((f) =>
      f.code
    ),
    ["request_error", "interrupted"],
  );
  // The request error says whose doing it was.
  assert.match(
    report.findings.find((f) => f.code === "request_error")!.message,
    /called off$/,
  );
  // Every ingest was acknowledged, so a clean poll still proves the cleanup.
  assert.equal(report.cleanup.cleanup_complete, true);
});

Deno.test("a request called off in the final sample leaves the run interrupted, not completed", async () => {
  const { report, calledOff } = await interruptWhileHanging((r) =>
    r.stage === "window" && r.op === "query" && r.role === "control" &&
    r.sample === 2
  );
  assert.equal(calledOff.length, 1);
  // Samples at 0, 0.5 and 1 s: the third is the final one.
  assert.equal(report.samples.length, 3);
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.timing.final_sample_started_at_seconds, null);
});

Deno.test("a Ctrl-C during a final sample whose requests all answer keeps the completed verdict", async () => {
  const controller = new AbortController();
  const { report } = await runFake({
    config: stagingConfig({ deletion_window_seconds: 1 }),
    signal: controller.signal,
    hook: (request, forward) => {
      if (request.stage === "window" && request.sample === 2) {
        controller.abort();
      }
      return forward();
    },
  });
  assert.equal(report.samples.length, 3);
  assert.equal(report.state, "completed");
  assert.equal(report.verdict, "PASS");
  assert.equal(report.cleanup.interrupted, true);
});

Deno.test("a request that starts after the interrupt and outlasts the bound is called off too, even in the final sample", async () => {
  const controller = new AbortController();
  const { report } = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 1,
      timeout_seconds: { ingest: 300, query: 300, inventory: 300, delete: 300 },
    }),
    signal: controller.signal,
    hook: (request, forward) => {
      if (request.stage !== "window" || request.sample !== 2) return forward();
      // The Ctrl-C comes as the final sample starts; its first request still answers.
      if (request.op === "inventory" && request.role === "test") {
        controller.abort();
        return forward();
      }
      return request.op === "query" && request.role === "test"
        ? hang(request, forward)
        : forward();
    },
  });
  assert.equal(report.samples.length, 3);
  assert.match(
    report.samples[2]!.errors[0]!.message,
    // The bound counts from the interrupt: the 5 ms the request before it took are gone.
    /^Request \/query failed: no answer within the 0\.995 s left after the interrupt, so the request was called off$/,
  );
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
});

/**
 * A run against an hour-long window that never cleans up (a stale cache),
 * interrupted as sample 1's first request goes out, which the adapter
 * answers `answerMs` later (virtual time).
 */
async function interruptedSlowAnswer(answerMs: number) {
  const clock = new VirtualClock();
  const controller = new AbortController();
  const sent: InterceptedRequest[] = [];
  const run = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 3600,
      sample_interval_seconds: 1,
    }),
    behaviour: { staleCache: true },
    clock,
    signal: controller.signal,
    hook: (request, forward) => {
      sent.push(request);
      if (
        request.stage === "window" && request.sample === 1 &&
        request.op === "inventory" && request.role === "test" &&
        !controller.signal.aborted
      ) {
        controller.abort();
        clock.advance(answerMs);
      }
      return forward();
    },
  });
  return { ...run, sent };
}

Deno.test("after an interrupt, cleanup polls only for what is left of the bound the request in flight began", async () => {
  const { report, events } = await interruptedSlowAnswer(20_000);
  assert.equal(report.state, "interrupted");
  assert.equal(report.cleanup.interrupted, true);
  // 30 s from the interrupt, less the 20 s the answer took and a few requests.
  assert.ok(
    report.cleanup.limit_seconds > 9.9 && report.cleanup.limit_seconds < 10,
    `${report.cleanup.limit_seconds}`,
  );
  assert.ok(
    report.cleanup.elapsed_seconds <= 10.1,
    `${report.cleanup.elapsed_seconds}`,
  );
  assert.deepEqual(
    ofType(events, "interrupted").map((e) => [e.phase, e.bound_seconds]),
    [["window", 30]],
  );
});

Deno.test("once the bound after an interrupt has passed, the rest of a sample is called off unsent, while cleanup still deletes and polls once", async () => {
  const { report, sent, events } = await interruptedSlowAnswer(40_000);
  // Of sample 1, only the request in flight was sent.
  assert.deepEqual(
    sent.filter((r) => r.stage === "window" && r.sample === 1).map((r) =>
      `${r.op} ${r.role}`
    ),
    ["inventory test"],
  );
  assert.deepEqual(
    report.samples[1]!.errors.map((e) => e.message),
    ["query", "inventory", "query"].map((op) =>
      `Request /${op} failed: the time allowed after the interrupt had run out before it was sent, so the request was called off`
    ),
  );
  // Requests not sent are not counted as sent.
  assert.equal(report.requests.total, sent.length);
  assert.equal(ofType(events, "request").length, sent.length);
  assert.equal(report.state, "interrupted");
  assert.equal(report.cleanup.limit_seconds, 0);
  assert.equal(report.cleanup.polls, 1);
  assert.deepEqual(
    report.cleanup.deletes.map((d) => [d.namespace, d.acknowledged]),
    [["test", true], ["control", true]],
  );
  assert.deepEqual(
    sent.filter((r) => r.stage === "cleanup").map((r) => `${r.op} ${r.role}`),
    [
      "delete test",
      "delete control",
      "inventory test",
      "query test",
      "inventory control",
      "query control",
    ],
  );
  assert.equal(ofType(events, "cleanup_started")[0]!.limit_seconds, 0);
});

Deno.test("after an interrupt, the last cleanup poll comes at the bound however long the sample interval", async () => {
  const { report } = await runFake({
    config: stagingConfig({
      deletion_window_seconds: 3600,
      sample_interval_seconds: 600,
    }),
    behaviour: { staleCache: true },
    ...interruptAtSample(0),
  });
  assert.equal(report.cleanup.interrupted, true);
  assert.equal(report.cleanup.polls, 2);
  assert.ok(
    report.cleanup.elapsed_seconds <= 30.1,
    `${report.cleanup.elapsed_seconds}`,
  );
});

Deno.test("an interrupted run whose last sample got no answer does not call that sample clean", async (t) => {
  const cases: [string, (r: InterceptedRequest) => boolean, RegExp][] = [
    [
      "an earlier sample was read in full",
      (r) => r.sample === 1,
      /its last sample \(#1 at 0\.50 s\) could not be read in full \(no usable answer to the marker query\); the last sample read in full \(#0 at 0\.00 s\) was clean, which only the final sample could have decided; cleanup still ran$/,
    ],
    [
      "no sample was read in full",
      () => true,
      /its last sample \(#1 at 0\.50 s\) could not be read in full \(no usable answer to the marker query\), and no sample was read in full; cleanup still ran$/,
    ],
  ];
  for (const [name, unanswered, message] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({
        ...interruptAtSample(1),
        hook: (request, forward) =>
          request.stage === "window" && request.role === "test" &&
            request.op === "query" && unanswered(request)
            ? Promise.reject(timeoutError("query"))
            : forward(),
      });
      assert.equal(report.verdict, "INCONCLUSIVE");
      assert.equal(report.samples.at(-1)!.marker_seen, null);
      const interrupted = report.findings.find((f) =>
        f.code === "interrupted"
      )!;
      assert.doesNotMatch(interrupted.message, /#1 at 0\.50 s\) was clean/);
      assert.match(interrupted.message, message);
    });
  }
});

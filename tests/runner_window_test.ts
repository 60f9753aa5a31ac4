/**
 * What a window's samples can show about data that went away: a clean read
 * counts only when it came close enough to the window's end (the schedule
 * did not slip past it) and when the data did not come back after as many
 * clean reads before.
 */

import assert from "node:assert/strict";
import { verdictProblem } from "../lib/ledger/_verdict.ts";
import type { RunReport } from "../lib/runner/report.ts";
import {
  findingsOf,
  type InterceptedRequest,
  markerAnswer,
  runFake,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

const isTestQuery = (request: InterceptedRequest) =>
  request.stage === "window" && request.role === "test" &&
  request.op === "query";

/**
 * A run whose test query answers the marker at the samples `seen` picks and
 * takes `answerMs(sample)` of virtual time; 2 s window sampled every 0.5 s
 * unless `windowSeconds` says otherwise.
 */
async function runWindow(options: {
  seen: (sample: number) => boolean;
  answerMs?: (sample: number) => number;
  windowSeconds?: number;
}): Promise<RunReport> {
  const clock = new VirtualClock();
  const { report } = await runFake({
    clock,
    config: stagingConfig({
      deletion_window_seconds: options.windowSeconds ?? 2,
    }),
    hook: async (request, forward) => {
      const answer = await forward();
      if (!isTestQuery(request)) return answer;
      clock.advance(options.answerMs?.(request.sample) ?? 0);
      return options.seen(request.sample) ? markerAnswer(request) : answer;
    },
  });
  // The ledger re-judges a stored run by its findings: they must imply its verdict.
  assert.equal(verdictProblem(report), null);
  return report;
}

function findingOf(report: RunReport, code: string) {
  const found = report.findings.find((f) => f.code === code);
  assert.ok(found, JSON.stringify(report.findings, null, 1));
  return found;
}

Deno.test("data last seen inside the window whose next read came more than one interval after its end is INCONCLUSIVE, not a transient residual", async () => {
  // The first sample's query answers the marker after 3 s: the next read starts at 3 s.
  const report = await runWindow({
    seen: (sample) => sample === 0,
    answerMs: (sample) => (sample === 0 ? 3_000 : 0),
  });
  assert.deepEqual(
    report.samples.map((s) => [s.started_at_seconds, s.marker_seen]),
    [[0, true], [3.02, false]],
  );
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.deepEqual(findingsOf(report, "transient"), []);
  assert.deepEqual(findingsOf(report, "inconclusive"), [
    "window_end_unobserved:retrieval",
  ]);
  const finding = findingOf(report, "window_end_unobserved");
  assert.deepEqual(finding.sample_indexes, [0, 1]);
  assert.deepEqual(finding.marker_forms, ["exact"]);
  assert.equal(
    finding.message,
    "the marker was retrievable at 0.00 s and next read 0 at 3.02 s, 1.02 s after the 2.00 s window ended, more than its 0.50 s sample interval: the adapter's answers took long (sample #0 took 3.02 s), so the run did not see whether the data was gone when the window ended; use a longer window or interval, or make the adapter answer faster",
  );
});

Deno.test("a read that slipped past the window's end by less than one interval still shows a transient residual, and is not called inside the window", async () => {
  // Samples at 0, 0.5, 1 and 1.5 s; the one at 1.5 s takes 0.8 s, so the final one starts at 2.32 s (each request takes 5 ms).
  const report = await runWindow({
    seen: (sample) => sample === 3,
    answerMs: (sample) => (sample === 3 ? 800 : 0),
  });
  assert.equal(report.samples.at(-1)!.started_at_seconds, 2.32);
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(findingsOf(report, "transient"), [
    "transient_residual:retrieval",
  ]);
  assert.equal(
    findingOf(report, "transient_residual").message,
    "the marker was retrievable at 1.50 s and read 0 from 2.32 s, within one 0.50 s sample interval after the 2.00 s window ended (transient residual)",
  );
});

Deno.test("data that came back after clean reads passes only when more clean reads follow its last sighting", async (t) => {
  const cases: {
    name: string;
    pattern: string;
    verdict: string;
    findings: string[];
    message: RegExp;
  }[] = [
    {
      name:
        "a stale replica every other query: one clean read after the last sighting",
      pattern: "TFTFTF",
      verdict: "INCONCLUSIVE",
      findings: ["intermittent_residual:retrieval"],
      message:
        /^the marker was retrievable at 0\.00 s, 1\.00 s and 2\.00 s: it came back 2 times, each after 1 clean read, and only 1 clean read follows its last sighting at 2\.00 s, too few to show it is gone; sample longer, or find the store or replica that still serves it$/,
    },
    {
      name: "as many clean reads after the last sighting as before a comeback",
      pattern: "TFFTFF",
      verdict: "INCONCLUSIVE",
      findings: ["intermittent_residual:retrieval"],
      message:
        /came back after 2 clean reads, and only 2 clean reads follow its last sighting at 1\.50 s/,
    },
    {
      name: "a series that converges",
      pattern: "TFTFFF",
      verdict: "PASS",
      findings: ["transient_residual:retrieval"],
      message:
        /^the marker was retrievable at 0\.00 s and 1\.00 s \(it came back after 1 clean read\) and read 0 from 1\.50 s, inside the 2\.50 s window \(transient residual\)$/,
    },
    {
      name: "back at the final sample",
      pattern: "TFTFT",
      verdict: "FAIL",
      findings: ["marker_retrievable:retrieval"],
      // The comeback is paired with the clean read it followed, and the
      // earlier flap is named.
      message:
        /^the marker read not retrievable at 1\.50 s but came back at 2\.00 s and was still there at the final sample at 2\.00 s \(it had read not retrievable and come back before, first at 0\.50 s\)$/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const report = await runWindow({
        seen: (sample) => c.pattern[sample] === "T",
        windowSeconds: (c.pattern.length - 1) / 2,
      });
      assert.deepEqual(
        report.samples.map((s) => (s.marker_seen ? "T" : "F")).join(""),
        c.pattern,
      );
      assert.equal(report.verdict, c.verdict);
      const severity = { PASS: "transient", FAIL: "fail" }[c.verdict] ??
        "inconclusive";
      assert.deepEqual(
        findingsOf(report, severity as "transient"),
        c.findings,
      );
      const code = c.findings[0]!.split(":")[0]!;
      assert.match(findingOf(report, code).message, c.message);
      assert.deepEqual(
        findingOf(report, code).sample_indexes,
        [...c.pattern].flatMap((v, i) => (v === "T" ? [i] : [])),
      );
    });
  }
});

Deno.test("a message about many sightings gives their count and the last one", async () => {
  const pattern = "TFTFTFTFTFFFF";
  const report = await runWindow({
    seen: (sample) => pattern[sample] === "T",
    windowSeconds: 6,
  });
  assert.equal(report.verdict, "PASS");
  assert.equal(
    findingOf(report, "transient_residual").message,
    "the marker was retrievable in 5 samples, the last at 4.00 s (it came back 4 times, each after 1 clean read) and read 0 from 4.50 s, inside the 6.00 s window (transient residual)",
  );
});

/** A run whose test namespace answers the marker on every other query, window and cleanup alike, unless `settles` says it stopped. */
async function runStaleReplica(settles: (query: number) => boolean) {
  let queries = 0;
  const { report } = await runFake({
    config: stagingConfig({ deletion_window_seconds: 3 }),
    hook: async (request, forward) => {
      const stale = request.role === "test" && request.op === "query" &&
        (request.stage === "window" || request.stage === "cleanup");
      if (!stale) return await forward();
      const query = queries++;
      return query % 2 === 0 && !settles(query)
        ? markerAnswer(request)
        : await forward();
    },
  });
  return report;
}

Deno.test("cleanup does not trust one clean poll of a marker that came back after clean reads", async () => {
  const report = await runStaleReplica(() => false);
  assert.equal(report.cleanup.cleanup_complete, false);
  assert.ok(
    report.cleanup.problems.some((p) =>
      /^the window saw the marker come back after 1 clean read\(s\), and only 1 clean poll\(s\) in a row came before cleanup's limit: it may come back again$/
        .test(p)
    ),
    JSON.stringify(report.cleanup.problems),
  );
});

Deno.test("cleanup trusts a marker that stopped coming back once clean polls outnumber the clean reads it came back after", async () => {
  // The replica catches up during the window: clean from the fifth query on.
  const report = await runStaleReplica((query) => query >= 4);
  assert.equal(
    report.cleanup.cleanup_complete,
    true,
    JSON.stringify(report.cleanup.problems),
  );
  assert.ok(report.cleanup.polls >= 2, String(report.cleanup.polls));
});

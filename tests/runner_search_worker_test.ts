/**
 * Large answers are searched on a worker thread: the main thread keeps
 * running its timers meanwhile, an abort ends the search at once, the
 * results are the inline search's, and a run interrupted while its final
 * sample's answers are being searched is INCONCLUSIVE, never PASS.
 */

import assert from "node:assert/strict";
import {
  AnswerSearcher,
  AnswerSearchError,
  findMarkerInAnswer,
  INLINE_SEARCH_LIMIT,
  MARKER_PREFIX,
  searchCost,
} from "../lib/runner/marker/mod.ts";
import type { RunEvent } from "../lib/runner/events.ts";
import { type InterceptHook, markerAnswer, runFake } from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

const MARKER = "trace_canary_7h3kq9x2mvb8rw4tjc0nd5pz1a";
const RANDOM = MARKER.slice(MARKER_PREFIX.length);

/** Text built to be expensive to fold and decode: about 3 ms per KiB. */
const HOSTILE_UNIT = "<a &amp;#x74;%74\\x74 74 QUFB ";

/** `kib` KiB of {@link HOSTILE_UNIT}. */
function hostile(kib: number): string {
  return HOSTILE_UNIT.repeat(Math.ceil(kib * 1024 / HOSTILE_UNIT.length));
}

/** Most an adapter's answer holds (the HTTP client's 1 MiB), and the slowest to search. */
const HUGE = hostile(850);

/** `{text, d: [[[… "x" …]]]}`, `depth` arrays deep. */
function nested(depth: number): Record<string, unknown> {
  let value: unknown = "x";
  for (let i = 0; i < depth; i++) value = [value];
  return { text: "nothing", d: value };
}

/** A hook that rewrites the test query's answer of the final sample (#2 of a 1 s window) alone. */
function finalTestQuery(
  rewrite: (answer: Record<string, unknown>) => Record<string, unknown>,
): InterceptHook {
  return async (request, forward) => {
    const answer = await forward();
    const final = request.stage === "window" && request.sample === 2 &&
      request.op === "query" && request.role === "test";
    return final ? rewrite(answer) : answer;
  };
}

function isAborted(error: unknown): boolean {
  return error instanceof AnswerSearchError && error.reason === "aborted";
}

Deno.test("AnswerSearcher.find() searches a large answer off the main thread: a timer set after it started fires first", async () => {
  const searcher = new AnswerSearcher();
  try {
    const order: string[] = [];
    const search = searcher.find({ text: hostile(128) }, MARKER).then(
      (match) => order.push(`search: ${match}`),
    );
    setTimeout(() => order.push("timer"), 0);
    await search;
    assert.deepEqual(order, ["timer", "search: null"]);
  } finally {
    searcher.close();
  }
});

Deno.test("AnswerSearcher.find() searches a small answer at once, as before", async () => {
  const searcher = new AnswerSearcher();
  try {
    const order: string[] = [];
    const search = searcher.find({ text: `x ${MARKER}` }, MARKER).then(
      (match) => order.push(`search: ${match?.form}`),
    );
    setTimeout(() => order.push("timer"), 0);
    await search;
    assert.deepEqual(order, ["search: exact"]);
    // Nothing cuts a small search short, not even an abort given beforehand.
    assert.equal(
      (await searcher.find({ text: MARKER }, MARKER, AbortSignal.abort()))
        ?.form,
      "exact",
    );
  } finally {
    searcher.close();
  }
});

Deno.test("aborting a search ends its worker at once and rejects with AnswerSearchError; the next search gets a fresh worker", async () => {
  const searcher = new AnswerSearcher();
  const other = new AnswerSearcher();
  try {
    const stop = new AbortController();
    const slow = searcher.find({ text: HUGE }, MARKER, stop.signal);
    stop.abort();
    await assert.rejects(slow, isAborted);
    // Left running, the aborted search would hold this one up for seconds,
    // and the search of half its size on another worker would win.
    const order: string[] = [];
    await Promise.all([
      searcher.find({ text: `${MARKER} ${HUGE}` }, MARKER).then((match) =>
        order.push(`after the abort: ${match?.form}`)
      ),
      other.find({ text: hostile(425) }, MARKER).then(() =>
        order.push("elsewhere")
      ),
    ]);
    assert.deepEqual(order, ["after the abort: exact", "elsewhere"]);
    // Already aborted: rejected before anything is sent.
    await assert.rejects(
      searcher.find({ text: HUGE }, MARKER, AbortSignal.abort()),
      isAborted,
    );
  } finally {
    searcher.close();
    other.close();
  }
});

Deno.test("close() rejects a search under way as aborted", async () => {
  const searcher = new AnswerSearcher();
  const search = searcher.find({ text: HUGE }, MARKER);
  searcher.close();
  await assert.rejects(search, isAborted);
});

Deno.test("AnswerSearcher.find() finds what findMarkerInAnswer() finds, above and below the inline limit", async (t) => {
  const pad = hostile(24);
  const cases: Record<string, Record<string, unknown>> = {
    "the exact marker": { text: `see ${MARKER}` },
    "a rendered marker": { text: `see ${MARKER.toUpperCase()}` },
    "no marker": { text: "nothing here", sources: ["a", "b"] },
    "the marker only in a nested key": {
      text: "none",
      sources: [{ scores: { [RANDOM]: 0.9 } }],
    },
    "the marker split across a list": {
      text: "",
      tokens: [MARKER.slice(0, 20), MARKER.slice(20)],
    },
  };
  const searcher = new AnswerSearcher();
  try {
    for (const [name, answer] of Object.entries(cases)) {
      const large = { ...answer, padding: pad };
      await t.step(name, async () => {
        assert.ok(
          searchCost(answer, INLINE_SEARCH_LIMIT) <= INLINE_SEARCH_LIMIT,
        );
        assert.ok(searchCost(large, INLINE_SEARCH_LIMIT) > INLINE_SEARCH_LIMIT);
        for (const a of [answer, large]) {
          assert.deepEqual(
            await searcher.find(a, MARKER),
            findMarkerInAnswer(a, MARKER),
          );
        }
      });
    }
  } finally {
    searcher.close();
  }
});

Deno.test("searchCost() counts text, a price per string and every other value, and stops past its limit", () => {
  assert.equal(searchCost({ text: "abc" }, 100), 16 + (4 + 16) + (3 + 16));
  // Each level of nesting is a call of the search: a few kilobytes nested
  // thousands deep are not searched on the calling thread.
  assert.ok(
    searchCost(nested(2_000), INLINE_SEARCH_LIMIT) > INLINE_SEARCH_LIMIT,
  );
  // Many empty strings cost time to search though they hold no text.
  assert.ok(
    searchCost({ a: Array(2_000).fill("") }, INLINE_SEARCH_LIMIT) >
      INLINE_SEARCH_LIMIT,
  );
  // It stops a few units past its limit, never walking the million items.
  assert.ok(searchCost({ a: Array(1e6).fill(0) }, 10) <= 10 + 3 * 16 + 2);
});

Deno.test("a Ctrl-C while the final sample's large answers are searched cuts the search at the bound: the answer is not read, the run INCONCLUSIVE", async () => {
  const controller = new AbortController();
  const events: RunEvent[] = [];
  const { report } = await runFake({
    // Samples at 0, 0.5 and 1 s: the third is the final one.
    config: stagingConfig({
      deletion_window_seconds: 1,
      timeout_seconds: { ingest: 300, query: 300, inventory: 300, delete: 300 },
    }),
    signal: controller.signal,
    onEvent: (event) => events.push(event),
    hook: async (request, forward) => {
      if (
        request.stage !== "window" || request.sample !== 2 ||
        request.op !== "query"
      ) {
        return await forward();
      }
      // An adapter whose answers take seconds to search, the marker gone.
      if (request.role === "test") controller.abort();
      const answer = await forward();
      return { ...answer, text: `${answer.text} ${HUGE}`, sources: [HUGE] };
    },
  });
  const interrupted = events.find((e) => e.type === "interrupted");
  assert.equal(
    interrupted?.type === "interrupted" && interrupted.bound_seconds,
    1,
  );
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
  const final = report.samples[2]!;
  // Not read, so not seen either way: never a clean final sample.
  assert.equal(final.marker_seen, null);
  const cut = final.errors.find((e) =>
    e.op === "query" && e.namespace === "test"
  );
  assert.equal(cut?.failure, "timeout");
  assert.match(
    cut.message,
    /^Request \/query failed: its answer was not read: searching it for the marker took longer than the [\d.]+ s left after the interrupt, so the search was called off$/,
  );
  // Cleanup kept to the bound the interrupt set.
  assert.equal(report.cleanup.interrupted, true);
  assert.ok(
    report.cleanup.limit_seconds <= 1,
    `${report.cleanup.limit_seconds}`,
  );
  assert.equal(report.timing.final_sample_started_at_seconds, null);
});

Deno.test("the same final sample searched to the end, without a Ctrl-C, passes: the large answer is read on the worker", async () => {
  const { report } = await runFake({
    config: stagingConfig({ deletion_window_seconds: 1 }),
    hook: finalTestQuery((answer) => ({
      ...answer,
      text: `${answer.text} ${hostile(48)}`,
    })),
  });
  assert.equal(report.state, "completed");
  assert.equal(report.verdict, "PASS");
  assert.equal(report.samples[2]!.marker_seen, false);
});

Deno.test("a large answer that still carries the marker is seen through the worker", async () => {
  const { report } = await runFake({
    config: stagingConfig({ deletion_window_seconds: 1 }),
    hook: async (request, forward) => {
      const answer = await forward();
      if (request.stage !== "window" || request.op !== "query") return answer;
      if (request.role !== "test") return answer;
      return { ...markerAnswer(request), sources: [hostile(48)] };
    },
  });
  assert.equal(report.verdict, "FAIL");
  assert.ok(report.samples.every((s) => s.marker_seen === true));
});

Deno.test("an answer nested too deep to search or to hand to the worker is not read: a failed search, never a throw past the run", async () => {
  const searcher = new AnswerSearcher();
  try {
    for (const depth of [8_000, 20_000]) {
      const outcome = await searcher.find(nested(depth), MARKER).then(
        (match) => ({ match }),
        (error) => ({ error }),
      );
      if ("error" in outcome) {
        assert.ok(
          outcome.error instanceof AnswerSearchError &&
            outcome.error.reason === "failed",
          String(outcome.error),
        );
      } else assert.equal(outcome.match, null, `depth ${depth}`);
    }
    // The searcher still works after a failure.
    assert.notEqual(
      await searcher.find({ text: `x ${MARKER}`, pad: hostile(20) }, MARKER),
      null,
    );
  } finally {
    searcher.close();
  }
});

Deno.test("a run whose final answer is nested too deep to read is INCONCLUSIVE and still cleans up", async () => {
  const { report } = await runFake({
    config: stagingConfig({ deletion_window_seconds: 1 }),
    hook: finalTestQuery((answer) => ({ ...answer, ...nested(20_000) })),
  });
  assert.equal(report.state, "completed");
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.samples[2]!.marker_seen, null);
  assert.equal(report.cleanup.cleanup_complete, true);
});

/**
 * The verdict rules of the deletion contract, one test each: data left at the
 * final sample is FAIL; a failed baseline, a missing observation, a request
 * error, a malformed answer, an incomplete inventory, a lost control or a
 * control namespace that grew after the deletion is INCONCLUSIVE; a clean early sample never ends the window; transient
 * residuals are recorded on a PASS; cleanup failure turns PASS into
 * INCONCLUSIVE and leaves FAIL a FAIL. Each test asserts on the report itself.
 */

import assert from "node:assert/strict";
import { ProtocolError, type Store, STORES } from "../lib/contract/protocol.ts";
import type { RunReport } from "../lib/runner/report.ts";
import {
  findingsOf,
  type InterceptedRequest,
  markerAnswer,
  runFake,
  timeoutError,
} from "./_fake_target.ts";

/** The default fake run samples at 0, 0.5, 1, 1.5 and 2 s. */
const SAMPLES = 5;
const LAST = SAMPLES - 1;

const inWindow = (request: InterceptedRequest, role: "test" | "control") =>
  request.stage === "window" && request.role === role;

function assertOnly(
  report: RunReport,
  severity: "fail" | "inconclusive" | "transient",
  expected: string[],
): void {
  assert.deepEqual(
    findingsOf(report, severity),
    expected,
    JSON.stringify(report.findings, null, 1),
  );
}

// --- data left at the final sample is FAIL ---------------------------------

Deno.test("a store that still counts records at the final sample is FAIL", async (t) => {
  for (const store of STORES) {
    await t.step(store, async () => {
      const { report } = await runFake({
        hook: async (request, forward) => {
          const answer = await forward();
          return request.op === "inventory" && inWindow(request, "test")
            ? { ...answer, [store]: 2 }
            : answer;
        },
      });
      assert.equal(report.verdict, "FAIL");
      assertOnly(report, "fail", [`residual_store:${store}`]);
      assert.equal(report.cleanup.cleanup_complete, true);
    });
  }
});

Deno.test("a marker still retrievable at the final sample is FAIL, with every store at zero", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.op === "query" && inWindow(request, "test")
        ? Promise.resolve(markerAnswer(request))
        : forward(),
  });
  assert.equal(report.verdict, "FAIL");
  assertOnly(report, "fail", ["marker_retrievable:retrieval"]);
  const last = report.samples[LAST]!;
  assert.deepEqual(
    STORES.map((store) => last.inventory?.[store]),
    [0, 0, 0],
  );
  assert.equal(last.marker_seen, true);
});

Deno.test("a marker answered in a rendered spelling at the final sample is FAIL", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.op === "query" && inWindow(request, "test")
        ? Promise.resolve({
          text: `It says ${
            String(request.body.query).toUpperCase().replaceAll("_", "\\_")
          } here`,
        })
        : forward(),
  });
  assert.equal(report.verdict, "FAIL");
  assertOnly(report, "fail", ["marker_retrievable:retrieval"]);
  const last = report.samples[LAST]!;
  assert.equal(last.marker_form, "rendered");
  assert.deepEqual(last.marker_rendering, ["case", "markdown_escapes"]);
  const finding = report.findings.find((f) => f.code === "marker_retrievable")!;
  assert.deepEqual(finding.marker_forms, ["rendered"]);
  assert.match(
    finding.message,
    /rendered with another case and Markdown escapes/,
  );
});

Deno.test("a clean early sample never ends the window: data back at the final sample is FAIL", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.op === "inventory" && inWindow(request, "test") &&
          request.sample === LAST
        ? { ...answer, vector_records: 1 }
        : answer;
    },
  });
  assert.equal(report.samples.length, SAMPLES);
  assert.ok(
    report.samples.slice(0, LAST).every((s) =>
      s.inventory?.vector_records === 0 && s.marker_seen === false
    ),
  );
  assert.equal(report.verdict, "FAIL");
  assertOnly(report, "fail", ["residual_store:vector_records"]);
  assert.deepEqual(report.findings[0]!.sample_indexes, [LAST]);
});

Deno.test("a healthy target is sampled until a sample starts at or after the window", async () => {
  const { report } = await runFake();
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(
    report.samples.map((s) => s.started_at_seconds),
    [0, 0.5, 1, 1.5, 2],
  );
});

// --- transient residuals are recorded on a PASS ----------------------------

/**
 * Runs with `subject` dirty (a store counting 3, or the marker retrieved) in
 * the test window's samples `dirty` picks; the run must PASS with only that
 * transient residual, which is returned.
 */
async function transientOf(
  subject: string,
  dirty: (request: InterceptedRequest) => boolean,
) {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      if (!inWindow(request, "test") || !dirty(request)) return answer;
      if (subject === "retrieval") {
        return request.op === "query" ? markerAnswer(request) : answer;
      }
      return request.op === "inventory" ? { ...answer, [subject]: 3 } : answer;
    },
  });
  assert.equal(report.verdict, "PASS");
  assertOnly(report, "transient", [`transient_residual:${subject}`]);
  return report.findings.find((f) => f.code === "transient_residual")!;
}

Deno.test("data gone before the final sample is a PASS with the transient residual recorded", async (t) => {
  for (const subject of [...STORES, "retrieval"]) {
    await t.step(subject, async () => {
      const transient = await transientOf(
        subject,
        (request) => request.sample <= 1,
      );
      assert.deepEqual(transient.sample_indexes, [0, 1]);
      assert.match(transient.message, /read 0 from 1\.00 s/);
    });
  }
});

Deno.test("data that read 0, came back and was gone again by the final sample is a PASS whose transient residual says it came back", async (t) => {
  for (const subject of ["vector_records", "retrieval"]) {
    await t.step(subject, async () => {
      const transient = await transientOf(
        subject,
        (request) => [0, 2].includes(request.sample),
      );
      assert.deepEqual(transient.sample_indexes, [0, 2]);
      assert.match(
        transient.message,
        /at 0\.00 s and 1\.00 s \(it came back after 1 clean read\) and read 0 from 1\.50 s, inside the 2\.00 s window/,
      );
    });
  }
});

Deno.test("data that could no longer be read after it was seen is not a transient residual: the request errors make it INCONCLUSIVE", async (t) => {
  for (const subject of [...STORES, "retrieval"]) {
    await t.step(subject, async () => {
      // Seen at the first sample, then the adapter stops answering for good.
      const { report } = await runFake({
        hook: async (request, forward) => {
          if (!inWindow(request, "test")) return await forward();
          if (request.sample >= 1) throw timeoutError(request.op);
          const answer = await forward();
          if (subject === "retrieval") {
            return request.op === "query" ? markerAnswer(request) : answer;
          }
          return request.op === "inventory"
            ? { ...answer, [subject]: 3 }
            : answer;
        },
      });
      assert.equal(report.verdict, "INCONCLUSIVE");
      assertOnly(report, "transient", []);
      assertOnly(report, "inconclusive", ["request_error:observation"]);
      assert.doesNotMatch(JSON.stringify(report.findings), /transient/);
    });
  }
});

Deno.test("data seen, then unreadable, then read 0 before the final sample is a transient residual", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      if (!inWindow(request, "test") || request.op !== "inventory") {
        return await forward();
      }
      if (request.sample === 1) throw timeoutError(request.op);
      const answer = await forward();
      return request.sample === 0 ? { ...answer, vector_records: 3 } : answer;
    },
  });
  // The request error still decides the verdict; the drop to 0 was seen.
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "transient", ["transient_residual:vector_records"]);
  const transient = report.findings.find((f) =>
    f.code === "transient_residual"
  )!;
  assert.match(
    transient.message,
    /^vector_records was 3 at 0\.00 s and read 0 from 1\.00 s/,
  );
});

// --- a failed baseline is INCONCLUSIVE, and nothing is deleted -------------

const BASELINE_FAILURES: [
  string,
  (
    request: InterceptedRequest,
    answer: Record<string, unknown>,
  ) => Record<string, unknown>,
  RegExp,
][] = [
  [
    "too few source records",
    (r, a) =>
      r.op === "inventory" && r.role === "test"
        ? { ...a, source_records: 2 }
        : a,
    /counted 2 source and 3 vector record\(s\); expected 3 of each/,
  ],
  [
    "too few vector records",
    (r, a) =>
      r.op === "inventory" && r.role === "test"
        ? { ...a, vector_records: 0 }
        : a,
    /counted 3 source and 0 vector record\(s\); expected 3 of each/,
  ],
  [
    "an incomplete test inventory",
    (r, a) =>
      r.op === "inventory" && r.role === "test" ? { ...a, complete: false } : a,
    /^test inventory answered complete: false$/,
  ],
  [
    "a marker that is not retrievable",
    (r, a) => r.op === "query" && r.role === "test" ? { text: "nothing" } : a,
    /^the canary marker was not retrievable through \/query$/,
  ],
  [
    "a control that is not counted",
    (r, a) =>
      r.op === "inventory" && r.role === "control"
        ? { ...a, source_records: 0 }
        : a,
    /^the control record was not counted in the control inventory$/,
  ],
  [
    "a control that is not retrievable",
    (r, a) =>
      r.op === "query" && r.role === "control" ? { text: "nothing" } : a,
    /^the control marker was not retrievable through \/query$/,
  ],
  [
    "an incomplete control inventory",
    (r, a) =>
      r.op === "inventory" && r.role === "control"
        ? { ...a, complete: false }
        : a,
    /^control inventory answered complete: false$/,
  ],
  [
    "an ingest that answers another id",
    (r, a) => r.op === "ingest" ? { id: `${String(r.body.id)}-2` } : a,
    /^ingest failed: .*supplied ids must be preserved$/,
  ],
];

Deno.test("a baseline that cannot be established is INCONCLUSIVE and nothing is deleted", async (t) => {
  for (const [name, rewrite, problem] of BASELINE_FAILURES) {
    await t.step(name, async () => {
      const { report, target } = await runFake({
        hook: async (request, forward) =>
          request.stage === "setup"
            ? rewrite(request, await forward())
            : await forward(),
      });
      assert.equal(report.verdict, "INCONCLUSIVE");
      assert.equal(report.baseline.ok, false);
      assert.equal(report.deletion, null);
      assert.deepEqual(report.samples, []);
      assert.equal(report.baseline.problems.length, 1, name);
      assert.match(report.baseline.problems[0]!, problem);
      assertOnly(report, "inconclusive", ["baseline_failed:baseline"]);
      const testDeletes = target.calls.filter((c) =>
        c.op === "delete" && c.body.namespace === report.namespaces.test
      );
      assert.equal(testDeletes.length, 1, "only cleanup deletes");
    });
  }
});

Deno.test("a baseline request error is INCONCLUSIVE", async (t) => {
  for (const op of ["ingest", "query", "inventory"] as const) {
    await t.step(op, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.stage === "setup" && request.op === op &&
            request.role === "test"
            ? Promise.reject(timeoutError(op))
            : forward(),
      });
      assert.equal(report.verdict, "INCONCLUSIVE");
      assert.equal(report.deletion, null);
      // The operation is named once, not again by the error's own words.
      assert.equal(
        report.baseline.problems[0],
        `${
          op === "ingest" ? "ingest" : `/${op} (test)`
        } failed: no complete answer within the budget`,
      );
      assertOnly(report, "inconclusive", ["baseline_failed:baseline"]);
    });
  }
});

// --- the deletion ----------------------------------------------------------

Deno.test("an unacknowledged deletion is INCONCLUSIVE and cleanup still deletes the ids", async (t) => {
  const answers: [string, () => Promise<Record<string, unknown>>][] = [
    ["a timeout", () => Promise.reject(timeoutError("delete"))],
    ["acknowledged: false", () => Promise.resolve({ acknowledged: false })],
  ];
  for (const [name, answer] of answers) {
    await t.step(name, async () => {
      const { report, target } = await runFake({
        hook: (request, forward) =>
          request.stage === "delete" ? answer() : forward(),
      });
      assert.equal(report.verdict, "INCONCLUSIVE");
      assert.equal(report.deletion?.acknowledged, false);
      assert.deepEqual(report.samples, [], "no window without a deletion");
      assertOnly(report, "inconclusive", ["delete_unacknowledged:deletion"]);
      const cleanup = target.calls.filter((c) => c.op === "delete");
      assert.deepEqual(cleanup[0]?.body.ids, report.issued.test);
    });
  }
});

// --- a request error or a malformed answer in the window is INCONCLUSIVE ---

Deno.test("a request error in one window sample is INCONCLUSIVE although every other sample is clean", async (t) => {
  for (const role of ["test", "control"] as const) {
    for (const op of ["inventory", "query"] as const) {
      await t.step(`${role} ${op}`, async () => {
        const { report } = await runFake({
          hook: (request, forward) =>
            request.op === op && inWindow(request, role) &&
              request.sample === 2
              ? Promise.reject(timeoutError(op))
              : forward(),
        });
        assert.equal(report.verdict, "INCONCLUSIVE");
        assertOnly(report, "inconclusive", ["request_error:observation"]);
        const finding = report.findings.find((f) =>
          f.code === "request_error"
        )!;
        assert.deepEqual(finding.sample_indexes, [2]);
        assert.equal(report.cleanup.cleanup_complete, true);
      });
    }
  }
});

Deno.test("a request error at the final sample leaves no observation and is INCONCLUSIVE, never PASS", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      inWindow(request, "test") && request.sample === LAST
        ? Promise.reject(timeoutError(request.op))
        : forward(),
  });
  const last = report.samples[LAST]!;
  assert.equal(last.inventory, null);
  assert.equal(last.marker_seen, null);
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["request_error:observation"]);
});

const MALFORMED: [string, "query" | "inventory", Record<string, unknown>][] = [
  ["a query answer without text", "query", { answer: "x" }],
  ["a query answer whose text is not a string", "query", { text: 1 }],
  ["a count that is a string", "inventory", {
    complete: true,
    source_records: "0",
    vector_records: 0,
    cache_records: 0,
  }],
  ["a complete flag that is not a boolean", "inventory", {
    complete: "yes",
    source_records: 0,
    vector_records: 0,
    cache_records: 0,
  }],
];

Deno.test("a malformed answer in the window is never a result: INCONCLUSIVE", async (t) => {
  for (const [name, op, body] of MALFORMED) {
    await t.step(name, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.op === op && inWindow(request, "test") &&
            request.sample === 2
            ? Promise.resolve(body)
            : forward(),
      });
      assert.equal(report.verdict, "INCONCLUSIVE");
      assertOnly(report, "inconclusive", ["request_error:observation"]);
      assert.match(report.findings[0]!.message, new RegExp(`/${op} response`));
      assert.equal(report.samples[2]!.errors[0]?.failure, "schema");
    });
  }
});

// --- an incomplete inventory in the window is INCONCLUSIVE -----------------

Deno.test("a test inventory that answers complete: false only during the window is INCONCLUSIVE", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.op === "inventory" && inWindow(request, "test")
        ? { ...answer, complete: false }
        : answer;
    },
  });
  assert.equal(report.baseline.ok, true);
  assert.equal(report.cleanup.cleanup_complete, true);
  assert.ok(report.samples.every((s) => s.inventory?.complete === false));
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["inventory_incomplete:inventory"]);
});

Deno.test("a control inventory that answers complete: false only during the window is INCONCLUSIVE", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.op === "inventory" && inWindow(request, "control")
        ? { ...answer, complete: false }
        : answer;
    },
  });
  assert.equal(report.baseline.ok, true);
  assert.equal(report.cleanup.cleanup_complete, true);
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", [
    "control_inventory_incomplete:control",
  ]);
});

// --- a lost control is INCONCLUSIVE ----------------------------------------

Deno.test("a control still counted by /inventory but no longer returned by /query is INCONCLUSIVE", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.op === "query" && inWindow(request, "control") &&
        request.sample >= 2
        ? Promise.resolve({ text: "no answer" })
        : forward(),
  });
  assert.ok(report.samples.every((s) => s.control_present === true));
  assert.deepEqual(
    report.samples.map((s) => s.control_seen),
    [true, true, false, false, false],
  );
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["control_lost:control"]);
  const finding = report.findings.find((f) => f.code === "control_lost")!;
  assert.deepEqual(finding.sample_indexes, [2, 3, 4]);
  assert.match(finding.message, /no longer retrievable at 1\.00 s/);
});

Deno.test("a control still returned by /query but no longer counted by /inventory is INCONCLUSIVE", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.op === "inventory" && inWindow(request, "control") &&
          request.sample >= 2
        ? { ...answer, source_records: 0, vector_records: 0 }
        : answer;
    },
  });
  assert.ok(report.samples.every((s) => s.control_seen === true));
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["control_lost:control"]);
  const finding = report.findings.find((f) => f.code === "control_lost")!;
  assert.deepEqual(finding.sample_indexes, [2, 3, 4]);
  assert.match(finding.message, /no longer counted in its inventory/);
});

// --- a control namespace that grew is INCONCLUSIVE ------------------------

Deno.test("a deletion that moves the canaries into the control namespace is INCONCLUSIVE", async () => {
  const { report } = await runFake({ behaviour: { moveToControl: true } });
  assert.deepEqual(report.baseline.control_inventory?.source_records, 1);
  assert.ok(report.samples.every((s) => s.control_present === true));
  assert.ok(report.samples.every((s) => s.marker_seen === false));
  assert.ok(
    report.samples.every((s) => s.control_inventory?.source_records === 4),
  );
  assert.equal(report.cleanup.cleanup_complete, true);
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["control_grew:control"]);
  const finding = report.findings.find((f) => f.code === "control_grew")!;
  assert.deepEqual(finding.sample_indexes, [0, 1, 2, 3, 4]);
  assert.match(
    finding.message,
    /first at 0\.00 s and in 5 of 5 sample\(s\): source_records from 1 to 4; the deletion may have moved/,
  );
});

/** A fake run whose control inventory in the window counts `extra[sample]` more in `store`. */
function controlCountingMore(store: Store, extra: readonly number[]) {
  return runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      if (request.op !== "inventory" || !inWindow(request, "control")) {
        return answer;
      }
      const more = extra[request.sample] ?? 0;
      return { ...answer, [store]: Number(answer[store]) + more };
    },
  });
}

Deno.test("a control store that counts more only in some samples names each grown store and the samples", async () => {
  const { report } = await controlCountingMore("vector_records", [0, 2, 1]);
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["control_grew:control"]);
  const finding = report.findings.find((f) => f.code === "control_grew")!;
  assert.deepEqual(finding.sample_indexes, [1, 2]);
  assert.match(
    finding.message,
    /first at 0\.50 s and in 2 of 5 sample\(s\): vector_records from 1 to as many as 3;/,
  );
});

Deno.test("a control cache that counts more after the deletion is not growth: the runner's own control queries fill it", async () => {
  const { report } = await controlCountingMore("cache_records", [
    1,
    2,
    2,
    2,
    2,
  ]);
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(findingsOf(report, "inconclusive"), []);
});

Deno.test("a control inventory that counts what it counted at the baseline passes", async () => {
  const { report } = await runFake();
  const before = report.baseline.control_inventory;
  assert.ok(report.samples.every((s) => s.control_inventory?.complete));
  assert.ok(
    report.samples.every((s) =>
      STORES.every((store) => s.control_inventory?.[store] === before?.[store])
    ),
  );
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(findingsOf(report, "inconclusive"), []);
});

Deno.test("a control inventory that counts more but answers complete: false is not read as growth", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.op === "inventory" && inWindow(request, "control")
        ? { ...answer, complete: false, source_records: 9 }
        : answer;
    },
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["control_inventory_incomplete:control"]);
});

// --- an interrupted window is INCONCLUSIVE ---------------------------------

Deno.test("a run interrupted during the window is INCONCLUSIVE and still cleans up", async () => {
  const controller = new AbortController();
  const { report } = await runFake({
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "sample" && event.sample.index === 1) {
        controller.abort();
      }
    },
  });
  assert.equal(report.samples.length, 2);
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["interrupted:window"]);
  assert.equal(report.cleanup.cleanup_complete, true);
});

Deno.test("a run interrupted during the window with data left at its last sample is INCONCLUSIVE, not FAIL", async () => {
  const controller = new AbortController();
  const { report } = await runFake({
    behaviour: { vectorDelayMs: 1_500 },
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "sample" && event.sample.index === 1) {
        controller.abort();
      }
    },
  });
  assert.equal(report.samples.at(-1)?.inventory?.vector_records, 3);
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.state, "interrupted");
  assertOnly(report, "fail", []);
  assertOnly(report, "inconclusive", ["interrupted:window"]);
  assert.match(
    report.findings[0]!.message,
    /before its final sample; its last sample \(#1 at 0\.50 s\) still showed vector_records 3/,
  );
  assert.equal(report.cleanup.cleanup_complete, true);
});

// --- cleanup failure turns PASS into INCONCLUSIVE; FAIL stays FAIL ---------

const CLEANUP_FAILURES: [
  string,
  (
    request: InterceptedRequest,
    forward: () => Promise<Record<string, unknown>>,
  ) => Promise<Record<string, unknown>>,
  RegExp,
][] = [
  [
    "an unacknowledged test deletion",
    (r, forward) =>
      r.op === "delete" && r.role === "test"
        ? Promise.reject(timeoutError("delete"))
        : forward(),
    /^the test deletion was not acknowledged: no complete answer within the budget$/,
  ],
  [
    "records left in the control namespace",
    async (r, forward) => {
      const answer = await forward();
      return r.op === "inventory" && r.role === "control"
        ? { ...answer, source_records: 1 }
        : answer;
    },
    /^source_records 1 left in the control namespace after polling$/,
  ],
  [
    "a control marker still retrievable",
    (r, forward) =>
      r.op === "query" && r.role === "control"
        ? Promise.resolve(markerAnswer(r))
        : forward(),
    /^the control marker is still retrievable through \/query after cleanup$/,
  ],
  [
    "a failing poll",
    (r, forward) =>
      r.op === "inventory" && r.role === "test"
        ? Promise.reject(timeoutError("inventory"))
        : forward(),
    /^test inventory failed: /,
  ],
  [
    "an incomplete inventory",
    async (r, forward) => {
      const answer = await forward();
      return r.op === "inventory" && r.role === "test"
        ? { ...answer, complete: false }
        : answer;
    },
    /^the test inventory answered complete: false$/,
  ],
];

Deno.test("cleanup failure turns a PASS into INCONCLUSIVE", async (t) => {
  for (const [name, hook, problem] of CLEANUP_FAILURES) {
    await t.step(name, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.stage === "cleanup" ? hook(request, forward) : forward(),
      });
      assert.ok(
        report.samples.every((s) =>
          s.errors.length === 0 && s.marker_seen === false &&
          STORES.every((store) => s.inventory?.[store] === 0)
        ),
        "the window alone would pass",
      );
      assert.equal(report.cleanup.cleanup_complete, false);
      assert.deepEqual(report.cleanup.problems.length, 1);
      assert.match(report.cleanup.problems[0]!, problem);
      assert.equal(report.verdict, "INCONCLUSIVE");
      assertOnly(report, "inconclusive", ["cleanup_incomplete:cleanup"]);
    });
  }
});

Deno.test("an adapter that fails every cleanup request alike is named once in the cleanup note", async () => {
  const gone = "cannot connect to 127.0.0.1:1: Connection refused";
  const { report } = await runFake({
    hook: (request, forward) =>
      request.stage === "cleanup"
        ? Promise.reject(
          new ProtocolError(
            "connect",
            `Request /${request.op} failed: ${gone}`,
          ),
        )
        : forward(),
  });
  assert.deepEqual(report.cleanup.problems, [
    `the test and control deletions were not acknowledged, and test inventory, test marker query, control inventory and control marker query failed: ${gone}`,
  ]);
  const note = report.findings.find((f) => f.code === "cleanup_incomplete")!;
  assert.equal(note.message.split(gone).length - 1, 1, note.message);
  assert.doesNotMatch(note.message, /\(connect\)|Request \//);
});

Deno.test("cleanup errors that differ each keep their own line", async () => {
  const { report } = await runFake({
    hook: (request, forward) => {
      if (request.stage !== "cleanup") return forward();
      if (request.op === "delete" && request.role === "control") {
        return Promise.reject(timeoutError("delete"));
      }
      return request.op === "inventory"
        ? Promise.reject(
          new ProtocolError(
            "http_status",
            "Request /inventory failed: HTTP 503, expected 200",
            { status: 503 },
          ),
        )
        : forward();
    },
  });
  assert.deepEqual(report.cleanup.problems, [
    "the control deletion was not acknowledged: no complete answer within the budget",
    "test inventory and control inventory failed: HTTP 503, expected 200",
    // Not deleted, so still there.
    "the control marker is still retrievable through /query after cleanup",
  ]);
});

Deno.test("cleanup polls both namespaces until a poll starts at or after the window", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.stage === "cleanup" && request.op === "inventory" &&
          request.role === "control"
        ? { ...answer, cache_records: 1 }
        : answer;
    },
  });
  assert.equal(report.cleanup.polls, SAMPLES);
  assert.ok(report.cleanup.elapsed_seconds >= 2);
  assert.equal(report.cleanup.remaining.control?.cache_records, 1);
  assert.equal(report.cleanup.remaining.test?.source_records, 0);
});

Deno.test("cleanup failure leaves a FAIL a FAIL, noted but not decisive", async () => {
  const { report } = await runFake({ behaviour: { staleCache: true } });
  assert.equal(report.cleanup.cleanup_complete, false);
  assert.equal(report.verdict, "FAIL");
  assertOnly(report, "inconclusive", []);
  assert.deepEqual(findingsOf(report, "note"), ["cleanup_incomplete:cleanup"]);
});

Deno.test("cleanup failure leaves an INCONCLUSIVE run INCONCLUSIVE with the cleanup noted", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      if (request.op !== "inventory" || request.role !== "test") return answer;
      return request.stage === "window"
        ? { ...answer, complete: false }
        : request.stage === "cleanup"
        ? { ...answer, cache_records: 1 }
        : answer;
    },
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assertOnly(report, "inconclusive", ["inventory_incomplete:inventory"]);
  assert.deepEqual(findingsOf(report, "note"), ["cleanup_incomplete:cleanup"]);
});

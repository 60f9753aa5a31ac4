/**
 * The advice a run's page and file lead with ("Next: Check …") follows the
 * finding's code and what its run's evidence shows, not the first check of
 * the code's guide.
 */

import assert from "node:assert/strict";
import { type Operation, ProtocolError } from "../lib/contract/protocol.ts";
import { EVIDENCE_CHECKS, findingGuide } from "../lib/runner/finding_guide.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { nextSteps, reportHeadline } from "../routes/ui/run_words.ts";
import { reportView } from "../lib/runs/mod.ts";
import { tokenRedactor } from "../lib/http/_redact.ts";
import { interpretAnswer } from "../lib/http/_answer.ts";
import { renderReport } from "../cli/_report_text.ts";
import {
  findingsOf,
  type InterceptHook,
  markerAnswer,
  runFake,
} from "./_fake_target.ts";
import { main } from "../cli.ts";
import { captureIo, withServer, withTempDir } from "./_helpers.ts";

const CONTEXT = { savedAs: null, regressionId: null };

/** What the page says after "Next:". */
function firstAdvice(report: RunReport): string {
  const first = nextSteps(report, CONTEXT)[0];
  assert.ok(first, `no next step for ${report.verdict}`);
  return first.text;
}

Deno.test("a store that read 0 and came back leads with what restores it, not with the delete path", async () => {
  const { report } = await runFake({ behaviour: { resurrectAtMs: 800 } });
  assert.deepEqual(findingsOf(report, "fail"), [
    "residual_store:vector_records",
  ]);
  assert.equal(report.samples[0]!.inventory?.vector_records, 0);
  assert.equal(
    firstAdvice(report),
    `Check that ${EVIDENCE_CHECKS.restored.vector_records}.`,
  );
});

Deno.test("a store that never read 0 still leads with the delete path", async () => {
  const { report } = await runFake({ behaviour: { vectorDelayMs: 60_000 } });
  assert.deepEqual(findingsOf(report, "fail"), [
    "residual_store:vector_records",
  ]);
  assert.equal(
    firstAdvice(report),
    `Check that ${findingGuide("residual_store", "vector_records").checks[0]}.`,
  );
});

Deno.test("a marker that was gone and came back leads with what makes it retrievable again", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.stage === "window" && request.op === "query" &&
        request.role === "test" && request.sample >= 2
        ? Promise.resolve(markerAnswer(request))
        : forward(),
  });
  assert.deepEqual(findingsOf(report, "fail"), [
    "marker_retrievable:retrieval",
  ]);
  assert.equal(
    firstAdvice(report),
    `Check that ${EVIDENCE_CHECKS.restored.retrieval}.`,
  );
});

Deno.test("a retrievable marker beside a cache that still holds records leads with the cached answer", async () => {
  const { report } = await runFake({ behaviour: { staleCache: true } });
  const texts = nextSteps(report, CONTEXT).map((s) => s.text);
  assert.ok(
    texts.includes(`Check that ${EVIDENCE_CHECKS.cachedAnswer}.`),
    texts.join("\n"),
  );
});

Deno.test("an inventory answering complete: false at the baseline leads with the inventory, not /ingest", async () => {
  const { report } = await runFake({ behaviour: { incomplete: true } });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.findings[0]!.code, "baseline_failed");
  assert.equal(
    firstAdvice(report),
    `Check: ${EVIDENCE_CHECKS.inventoryComplete}.`,
  );
});

Deno.test("a baseline marker that was not retrievable leads with /query", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.stage === "setup" && request.op === "query" &&
        request.role === "test"
        ? Promise.resolve({ text: "no answer" })
        : forward(),
  });
  assert.match(report.findings[0]!.message, /marker was not retrievable/);
  assert.equal(
    firstAdvice(report),
    `Check: ${EVIDENCE_CHECKS.queryRetrieves}.`,
  );
});

Deno.test("a baseline that counted too few records leads with /ingest visibility", async () => {
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.stage === "setup" && request.op === "inventory" &&
          request.role === "test"
        ? { ...answer, vector_records: 0 }
        : answer;
    },
  });
  assert.match(report.findings[0]!.message, /expected 3 of each/);
  assert.equal(
    firstAdvice(report),
    `Check: ${EVIDENCE_CHECKS.ingestVisible}.`,
  );
});

Deno.test("a baseline that counted more records than it ingested leads with what /inventory counts, not /ingest visibility", async (t) => {
  const cases: [string, Record<string, number>][] = [
    ["a namespace it was not given", { source_records: 4, vector_records: 4 }],
    ["chunks as documents", { vector_records: 7 }],
    ["chunks beside a store that counted too few", {
      source_records: 2,
      vector_records: 7,
    }],
  ];
  for (const [name, counts] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({
        hook: async (request, forward) => {
          const answer = await forward();
          return request.stage === "setup" && request.op === "inventory" &&
              request.role === "test"
            ? { ...answer, ...counts }
            : answer;
        },
      });
      assert.match(report.findings[0]!.message, /expected 3 of each/);
      assert.equal(
        firstAdvice(report),
        `Check: ${EVIDENCE_CHECKS.countedOnce}.`,
      );
    });
  }
});

/** A 404 as the strict HTTP client words it for a server without the adapter's routes. */
function notFound(op: string): ProtocolError {
  return new ProtocolError(
    "http_status",
    `Request /${op} failed: HTTP 404 from POST http://127.0.0.1:9/nope/${op}, expected 200: check that base_url points at the trace-staging/1 adapter, which answers POST base_url/ingest, /query, /inventory and /delete`,
    { status: 404 },
  );
}

Deno.test("an ingest that reached no adapter leads with base_url and the adapter, not /ingest visibility", async (t) => {
  const cases: [string, ProtocolError][] = [
    ["HTTP 404", notFound("ingest")],
    [
      "HTTP 405",
      new ProtocolError(
        "http_status",
        "Request /ingest failed: HTTP 405 from POST http://127.0.0.1:9/ingest, expected 200: check that base_url points at the trace-staging/1 adapter",
        { status: 405 },
      ),
    ],
    [
      "a refused connection",
      new ProtocolError(
        "connect",
        "cannot connect to 127.0.0.1:9: Connection refused (os error 111)",
      ),
    ],
    [
      "an unknown host",
      new ProtocolError(
        "connect",
        "cannot connect to staging.invalid: failed to lookup address information",
      ),
    ],
    [
      "a TLS error",
      new ProtocolError(
        "tls",
        "TLS handshake with staging.example failed: invalid peer certificate",
      ),
    ],
    [
      "a redirect",
      new ProtocolError(
        "redirect",
        "Request /ingest failed: HTTP 301 redirect from POST http://127.0.0.1:9/ingest; redirects are not followed",
        { status: 301 },
      ),
    ],
    [
      "an answer that is not JSON",
      new ProtocolError(
        "malformed_json",
        "Request /ingest failed: the answer is not valid JSON (unexpected character at line 1, column 1)",
        { status: 200 },
      ),
    ],
  ];
  for (const [name, error] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.op === "ingest" ? Promise.reject(error) : forward(),
      });
      assert.equal(report.findings[0]!.code, "baseline_failed");
      assert.match(report.findings[0]!.message, /ingest failed: /);
      assert.equal(
        firstAdvice(report),
        `Check: ${EVIDENCE_CHECKS.adapterReached}.`,
      );
      const text = renderReport(report);
      assert.ok(
        text.includes(
          `\nWhat to check\n  Check: ${EVIDENCE_CHECKS.adapterReached}.\n`,
        ),
        text,
      );
      assert.ok(!text.includes(EVIDENCE_CHECKS.ingestVisible), text);
    });
  }
});

Deno.test("an ingest the adapter reached but could not take leads with what its error points at", async (t) => {
  const cases: [string, ProtocolError, string][] = [
    [
      "a timeout",
      new ProtocolError(
        "timeout",
        "Request /ingest failed: no complete answer within 10 s",
      ),
      EVIDENCE_CHECKS.timeout,
    ],
    [
      "an answer of the wrong shape",
      new ProtocolError(
        "schema",
        "Request /ingest failed: the answer has no string id",
        { status: 200 },
      ),
      EVIDENCE_CHECKS.contractFields,
    ],
    [
      "an answer that repeats a key",
      new ProtocolError(
        "malformed_json",
        "Request /ingest failed: the answer repeats a key; send each key once (duplicate key at line 1, column 12)",
        { status: 200 },
      ),
      EVIDENCE_CHECKS.malformed,
    ],
    [
      "HTTP 401",
      new ProtocolError(
        "http_status",
        "Request /ingest failed: HTTP 401 Unauthorized, expected 200: the adapter refused the bearer token from the environment variable STAGING_TOKEN (token_env); check that it holds the token the adapter expects and that the token may call this operation",
        { status: 401 },
      ),
      EVIDENCE_CHECKS.tokenAccepted,
    ],
    [
      "HTTP 503",
      new ProtocolError(
        "http_status",
        "Request /ingest failed: HTTP 503 from POST http://127.0.0.1:9/ingest, expected 200",
        { status: 503 },
      ),
      EVIDENCE_CHECKS.unavailable,
    ],
  ];
  for (const [name, error, lead] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.op === "ingest" ? Promise.reject(error) : forward(),
      });
      assert.match(report.findings[0]!.message, /ingest failed: /);
      assert.deepEqual(
        report.baseline.errors.map((e) => [e.op, e.failure]),
        [["ingest", error.failure]],
      );
      assert.equal(firstAdvice(report), `Check: ${lead}.`);
      assert.ok(
        !renderReport(report).includes(EVIDENCE_CHECKS.adapterReached),
      );
    });
  }
});

/** The error the strict HTTP client gives a 200 answer whose body is `text`. */
function answerError(
  op: Operation,
  text: string,
  headers: Record<string, string> = {},
): ProtocolError {
  const response = {
    status: 200,
    headers: new Map<string, string[]>(
      Object.entries(headers).map(([name, value]) => [name, [value]]),
    ),
    body: new TextEncoder().encode(text),
  };
  try {
    interpretAnswer(op, response, {
      url: new URL(`http://127.0.0.1:9/${op}`),
      tokenEnv: undefined,
      tokenSent: false,
    });
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error(`the client took ${text} as an answer`);
}

/** Every /query answered with `text` (and `headers`), read as the strict client reads it. */
const queryAnswering = (
  text: string,
  headers: Record<string, string> = {},
): InterceptHook =>
(request, forward) =>
  request.op === "query"
    ? Promise.reject(answerError("query", text, headers))
    : forward();

Deno.test("answers that parse but break the contract's schema lead with its fields, syntax errors with the JSON format", async (t) => {
  const cases: [string, InterceptHook, RegExp, string][] = [
    [
      "/ingest answering {doc_id}",
      (request, forward) =>
        request.op === "ingest"
          ? Promise.resolve({ doc_id: request.body.id })
          : forward(),
      /\/ingest response: id: is required/,
      EVIDENCE_CHECKS.contractFields,
    ],
    [
      "source_records as a string",
      async (request, forward) => {
        const answer = await forward();
        return request.stage === "setup" && request.op === "inventory"
          ? { ...answer, source_records: "3" }
          : answer;
      },
      /source_records: must be a non-negative integer/,
      EVIDENCE_CHECKS.contractFields,
    ],
    [
      'complete: "true"',
      async (request, forward) => {
        const answer = await forward();
        return request.stage === "setup" && request.op === "inventory"
          ? { ...answer, complete: "true" }
          : answer;
      },
      /complete: must be a boolean/,
      EVIDENCE_CHECKS.contractFields,
    ],
    [
      "/query answering a JSON array",
      queryAnswering("[]"),
      /JSON but not an object/,
      EVIDENCE_CHECKS.contractFields,
    ],
    [
      "/query answering trailing bytes",
      queryAnswering('{"text": "a"} {}'),
      /more after its JSON object/,
      EVIDENCE_CHECKS.malformed,
    ],
    [
      "/query answering text that is not JSON",
      queryAnswering("<html>"),
      /not valid JSON/,
      EVIDENCE_CHECKS.malformed,
    ],
    [
      "/query answering gzip",
      queryAnswering("{}", { "content-encoding": "gzip" }),
      /the answer is compressed \(Content-Encoding: gzip\)/,
      EVIDENCE_CHECKS.malformed,
    ],
  ];
  for (const [name, hook, message, lead] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({ hook });
      assert.equal(report.findings[0]!.code, "baseline_failed");
      assert.match(report.findings[0]!.message, message);
      assert.equal(firstAdvice(report), `Check: ${lead}.`);
    });
  }
  // The format check names what a compressed answer has to change.
  assert.match(EVIDENCE_CHECKS.malformed, /uncompressed/);
});

/** An HTTP 5xx status as the strict HTTP client words it. */
function serverError(op: Operation, status: number): ProtocolError {
  return new ProtocolError(
    "http_status",
    `Request /${op} failed: HTTP ${status}, expected 200`,
    { status },
  );
}

Deno.test("an operation whose every request answered HTTP 500 from the first on leads with its own handler; one that worked before, one request, or a gateway status with rate limits and restarts", async (t) => {
  const cases: [string, InterceptHook, string, string][] = [
    [
      "every /query",
      (request, forward) =>
        request.op === "query"
          ? Promise.reject(serverError("query", 500))
          : forward(),
      "baseline_failed",
      EVIDENCE_CHECKS.failingHandler.query,
    ],
    [
      "every /inventory",
      (request, forward) =>
        request.op === "inventory"
          ? Promise.reject(serverError("inventory", 500))
          : forward(),
      "baseline_failed",
      EVIDENCE_CHECKS.failingHandler.inventory,
    ],
    [
      // What a restart or a gateway answers is not the handler's own failure.
      "every /query with 503",
      (request, forward) =>
        request.op === "query"
          ? Promise.reject(serverError("query", 503))
          : forward(),
      "baseline_failed",
      EVIDENCE_CHECKS.unavailable,
    ],
    [
      // Ingest stops at its first failure: one 500 cannot show it never worked.
      "the first /ingest",
      (request, forward) =>
        request.op === "ingest"
          ? Promise.reject(serverError("ingest", 500))
          : forward(),
      "baseline_failed",
      EVIDENCE_CHECKS.unavailable,
    ],
    [
      "/query from the second window sample on",
      (request, forward) =>
        request.op === "query" && request.stage !== "setup" &&
          !(request.stage === "window" && request.sample < 1)
          ? Promise.reject(serverError("query", 500))
          : forward(),
      "request_error",
      EVIDENCE_CHECKS.unavailable,
    ],
    [
      "/ingest from the second document on",
      (() => {
        let ingests = 0;
        return (request, forward) =>
          request.op === "ingest" && ++ingests > 1
            ? Promise.reject(serverError("ingest", 503))
            : forward();
      })() satisfies InterceptHook,
      "baseline_failed",
      EVIDENCE_CHECKS.unavailable,
    ],
  ];
  for (const [name, hook, code, lead] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({ hook });
      assert.equal(report.verdict, "INCONCLUSIVE");
      assert.equal(report.findings[0]!.code, code);
      assert.equal(firstAdvice(report), `Check: ${lead}.`);
    });
  }
});

Deno.test("an ingest that answered another id leads with keeping the ids it was sent", async () => {
  const { report } = await runFake({ behaviour: { rewriteIds: true } });
  assert.match(report.findings[0]!.message, /answered a different id/);
  assert.equal(
    firstAdvice(report),
    `Check: ${EVIDENCE_CHECKS.idsPreserved}.`,
  );
});

Deno.test("a checkpoint that could not be written leads with the data directory, not the adapter", async () => {
  const { report } = await runFake({
    checkpoint: {
      location: "/full/disk/run.json",
      write: () => Promise.reject(new Error("No space left on device")),
    },
  });
  assert.match(report.findings[0]!.message, /checkpoint .* could not be/);
  assert.equal(
    firstAdvice(report),
    `Check: ${EVIDENCE_CHECKS.checkpointWritable}.`,
  );
});

Deno.test("a baseline operation the adapter does not serve leads with base_url and the adapter", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.stage === "setup" && request.op === "inventory"
        ? Promise.reject(notFound("inventory"))
        : forward(),
  });
  assert.match(
    report.findings[0]!.message,
    /\/inventory \(test\) failed: HTTP 404/,
  );
  assert.equal(
    firstAdvice(report),
    `Check: ${EVIDENCE_CHECKS.adapterReached}.`,
  );
});

Deno.test("trace external-run against a base_url without the adapter says to check base_url, not /ingest visibility", async () => {
  await withTempDir(async (dir) => {
    await withServer(() => new Response("Not Found", { status: 404 }), async (
      { url },
    ) => {
      const config = `${dir}/staging.json`;
      await Deno.writeTextFile(
        config,
        JSON.stringify({
          base_url: `${url}/nope`,
          environment: "staging",
          allow_synthetic_writes: true,
          deletion_window_seconds: 0.5,
          sample_interval_seconds: 0.25,
        }),
      );
      const io = captureIo();
      const code = await main([
        "external-run",
        "--config",
        config,
        "--data-dir",
        `${dir}/data`,
      ], io);
      assert.equal(code, 2, io.stderr());
      const out = io.stdout();
      assert.match(out, /ingest failed: HTTP 404 from POST \S+\/nope\/ingest/);
      assert.ok(
        out.includes(
          `\nWhat to check\n  Check: ${EVIDENCE_CHECKS.adapterReached}.\n`,
        ),
        out,
      );
      assert.doesNotMatch(out, /synchronous visibility/);
    });
  });
});

Deno.test("malformed answers in the window lead with the answer format, not the timeout", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.stage === "window" && request.op === "inventory" &&
        request.sample === 1
        ? Promise.reject(new ProtocolError("malformed_json", "not JSON"))
        : forward(),
  });
  assert.deepEqual(findingsOf(report, "inconclusive"), [
    "request_error:observation",
  ]);
  assert.equal(firstAdvice(report), `Check: ${EVIDENCE_CHECKS.malformed}.`);
});

Deno.test("a TLS error or a redirect in the window leads with base_url and the adapter, not the timeout", async (t) => {
  for (const failure of ["tls", "redirect"] as const) {
    await t.step(failure, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.stage === "window" && request.op === "query" &&
            request.sample === 1
            ? Promise.reject(new ProtocolError(failure, failure))
            : forward(),
      });
      assert.deepEqual(findingsOf(report, "inconclusive"), [
        "request_error:observation",
      ]);
      assert.equal(
        firstAdvice(report),
        `Check: ${EVIDENCE_CHECKS.adapterReached}.`,
      );
    });
  }
});

Deno.test("an interrupted run whose cleanup completed says to rerun, not to remove ids", async () => {
  const abort = new AbortController();
  const { report } = await runFake({
    signal: abort.signal,
    hook: (request, forward) => {
      if (request.stage === "window" && request.sample === 2) abort.abort();
      return forward();
    },
  });
  assert.equal(report.state, "interrupted");
  assert.equal(report.cleanup.cleanup_complete, true);
  assert.equal(firstAdvice(report), `Check: ${EVIDENCE_CHECKS.rerun}.`);
});

Deno.test("a marker that flaps to the end of the window is INCONCLUSIVE and leads with what still serves it", async () => {
  // Every other window query answers with the marker: one stale replica.
  const { report } = await runFake({
    hook: (request, forward) =>
      request.stage === "window" && request.op === "query" &&
        request.role === "test" && request.sample % 2 === 1
        ? Promise.resolve(markerAnswer(request))
        : forward(),
  });
  assert.equal(report.verdict, "INCONCLUSIVE", JSON.stringify(report.findings));
  const first = report.findings.find((f) => f.severity === "inconclusive");
  assert.equal(first?.code, "intermittent_residual");
  assert.match(firstAdvice(report), /^Check: /);
});

Deno.test("a PASS headline says inside the window only for residuals that cleared inside it", async () => {
  const { report } = await runFake({ behaviour: { vectorDelayMs: 300 } });
  assert.equal(report.verdict, "PASS", JSON.stringify(report.findings));
  assert.match(reportHeadline(report), / inside the window\.$/);
  // The rules accept the clean read up to one interval past the window.
  const residual = report.findings.find((f) => f.code === "transient_residual");
  const cleared = report.samples[residual!.sample_indexes.at(-1)! + 1]!;
  const window = cleared.started_at_seconds - 0.1;
  const late = {
    ...report,
    timing: { ...report.timing, deletion_window_seconds: window },
  };
  assert.match(
    reportHeadline(late),
    /\(the [\d.]+ s window, and one sample interval after it\)\.$/,
  );
});

Deno.test("the terminal report says what to check, as the run page does", async () => {
  const { report } = await runFake({ behaviour: { resurrectAtMs: 800 } });
  const text = renderReport(report);
  assert.ok(
    text.includes(
      `\nWhat to check\n  Check that ${EVIDENCE_CHECKS.restored.vector_records}.\n`,
    ),
    text,
  );
  const { report: pass } = await runFake({});
  assert.ok(!renderReport(pass).includes("What to check"));
});

Deno.test("answers not read after they arrived lead with why: the token they echoed, or a search that could not finish", async () => {
  const token = "staging-token-abc123";
  const { report } = await runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.op === "query" && request.role === "test" &&
          request.stage === "window"
        ? tokenRedactor(token).answer({ ...answer, echo: token })
        : answer;
    },
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(
    firstAdvice(report),
    `Check: ${EVIDENCE_CHECKS.tokenNotEchoed}.`,
  );
  // The same sample, its answer's search cut short instead.
  const cut = structuredClone(report);
  const error = cut.samples.flatMap((s) => s.errors)[0]!;
  error.failure = "timeout";
  error.message =
    "Request /query failed: its answer was not read: searching it for the marker took longer than its 5 s timeout, so the search was called off";
  assert.equal(
    firstAdvice(cut),
    `Check: ${EVIDENCE_CHECKS.searchableAnswers}.`,
  );
});

Deno.test("external-show --json carries the report's What to check, and nothing for a PASS or a reference run", async () => {
  const failing = (await runFake({ behaviour: { staleCache: true } })).report;
  const checks = nextSteps(failing, CONTEXT)
    .filter((s) => s.command === null).map((s) => s.text);
  assert.ok(checks.length > 0);
  assert.deepEqual(reportView(failing).what_to_check, checks);
  const passing = (await runFake()).report;
  assert.equal(passing.verdict, "PASS");
  assert.deepEqual(reportView(passing).what_to_check, []);
  assert.deepEqual(
    reportView({ ...failing, kind: "reference" }).what_to_check,
    [],
  );
});

Deno.test("a marker seen while the cache read 0 leads with the query path, not the cache", async () => {
  const { report } = await runFake({ behaviour: { staleCache: true } });
  assert.equal(report.verdict, "FAIL");
  assert.equal(
    firstAdvice(report),
    `Check that ${EVIDENCE_CHECKS.cachedAnswer}.`,
  );
  // A tombstoned record search still reads: seen before anything was cached.
  const tombstoned = structuredClone(report);
  tombstoned.samples[0]!.inventory!.cache_records = 0;
  assert.equal(
    firstAdvice(tombstoned),
    `Check that ${findingGuide("marker_retrievable", "retrieval").checks[0]}.`,
  );
});

Deno.test("an interrupted run leads with the interrupt, not with the requests it called off", async () => {
  const { report } = await runFake({});
  const interrupted: RunReport = {
    ...report,
    verdict: "INCONCLUSIVE",
    state: "interrupted",
    findings: [
      {
        severity: "inconclusive",
        code: "request_error",
        subject: "observation",
        message:
          "1 of 1 sample(s) had request errors; first at 0.00 s: Request /query failed: no answer within the 1 s left after the interrupt, so the request was called off",
        sample_indexes: [0],
      },
      {
        severity: "inconclusive",
        code: "interrupted",
        subject: "window",
        message: "The run was interrupted",
        sample_indexes: [],
      },
    ],
  };
  assert.doesNotMatch(firstAdvice(interrupted), /timeout_seconds/);
  assert.match(firstAdvice(interrupted), /^Check: /);
});

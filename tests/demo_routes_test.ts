import assert from "node:assert/strict";
import { demoBehaviour, type DemoDefect } from "../lib/demo/defects.ts";
import { type MemoryLimits, MemoryPipeline } from "../lib/memory/mod.ts";
import { createStagingApp } from "../routes/staging.ts";

const NS = "trace-test-r1";
const MARKER = "trace_canary_7a7a";
const DOC_TEXT = `Synthetic routed note ${MARKER}`;

type App = ReturnType<typeof createStagingApp>;

/** An app over the demo's pipeline with a captured request log; the pipeline is closed afterwards. */
async function withApp(
  defect: DemoDefect | null,
  fn: (app: App, logs: string[], pipeline: MemoryPipeline) => Promise<void>,
  delayMs?: number,
): Promise<void> {
  const pipeline = new MemoryPipeline(demoBehaviour(defect, delayMs));
  const logs: string[] = [];
  try {
    await fn(
      createStagingApp(pipeline, { log: (line) => logs.push(line) }),
      logs,
      pipeline,
    );
  } finally {
    pipeline.close();
  }
}

async function post(
  app: App,
  op: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await app.request(`/${op}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function inventory(app: App, namespace = NS): Promise<unknown[]> {
  const { json } = await post(app, "inventory", { namespace });
  return [
    json.complete,
    json.source_records,
    json.vector_records,
    json.cache_records,
  ];
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("createStagingApp() serves the healthy lifecycle over the four operations", async () => {
  await withApp(null, async (app) => {
    assert.deepEqual(
      await post(app, "ingest", {
        namespace: NS,
        id: "trace-doc-1",
        text: DOC_TEXT,
      }),
      {
        status: 200,
        json: { id: "trace-doc-1" },
      },
    );
    const answer = await post(app, "query", { namespace: NS, query: MARKER });
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(answer.json), ["text"]);
    assert.ok(String(answer.json.text).includes(MARKER));
    assert.deepEqual(await inventory(app), [true, 1, 1, 1]);

    assert.deepEqual(
      await post(app, "delete", { namespace: NS, ids: ["trace-doc-1"] }),
      {
        status: 200,
        json: { acknowledged: true },
      },
    );
    assert.deepEqual(await inventory(app), [true, 0, 0, 0]);
    const after = await post(app, "query", { namespace: NS, query: MARKER });
    assert.ok(!String(after.json.text).includes(MARKER));
  });
});

Deno.test("createStagingApp() acknowledges deletion of unknown ids", async () => {
  await withApp(null, async (app) => {
    assert.deepEqual(
      await post(app, "delete", { namespace: NS, ids: ["trace-doc-none"] }),
      {
        status: 200,
        json: { acknowledged: true },
      },
    );
    assert.deepEqual(await post(app, "delete", { namespace: NS, ids: [] }), {
      status: 200,
      json: { acknowledged: true },
    });
  });
});

Deno.test("createStagingApp() rejects invalid bodies with a one-line error naming the field", async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ["ingest", { namespace: NS, id: "trace-doc-1" }, /^text: is required$/],
    [
      "ingest",
      { namespace: NS, id: "trace-doc-1", text: "x", extra: 1 },
      /^extra: unknown key/,
    ],
    [
      "ingest",
      { namespace: "", id: "trace-doc-1", text: "x" },
      /^namespace: must not be empty$/,
    ],
    [
      "ingest",
      `{"namespace":"a\\ud800","id":"trace-doc-1","text":"x"}`,
      /^namespace: must be well-formed Unicode \(it holds a lone surrogate\)$/,
    ],
    [
      "delete",
      `{"namespace":"${NS}","ids":["ok","\\udfff"]}`,
      /^ids\.1: must be well-formed Unicode \(it holds a lone surrogate\)$/,
    ],
    [
      "ingest",
      { namespace: NS, id: "doc-\udc00", text: "x" },
      /^id: must be well-formed Unicode/,
    ],
    [
      "ingest",
      `{"namespace":"${NS}","id":"trace-doc-1","text":"canary \\ud83d"}`,
      /^text: must be well-formed Unicode \(it holds a lone surrogate\)$/,
    ],
    [
      "query",
      `{"namespace":"${NS}","query":"\\udc00 canary"}`,
      /^query: must be well-formed Unicode \(it holds a lone surrogate\)$/,
    ],
    ["query", { namespace: NS, query: 42 }, /^query: must be a string$/],
    ["inventory", [], /^body: must be a JSON object$/],
    ["inventory", "null", /^body: must be a JSON object$/],
    ["delete", { namespace: NS, ids: "trace-doc-1" }, /^ids: must be an array/],
    ["delete", { namespace: NS, ids: [7] }, /^ids\.0: must be a string$/],
    [
      "query",
      "{not json",
      /^body: The body is not valid JSON \(line 1, column 2: .+\)$/,
    ],
    [
      "query",
      `{"namespace":"${NS}","query":"q"} {}`,
      /^body: The body is not valid JSON \(line 1, column \d+: .+\)$/,
    ],
    // A field given twice is refused, never read as its last value.
    [
      "delete",
      `{"namespace":"${NS}","ids":["a"],"ids":["b"]}`,
      /^body: The body gives a field twice \(line 1, column 42\); send each field once$/,
    ],
  ];
  await withApp(null, async (app) => {
    for (const [op, body, expected] of cases) {
      await t.step(`${op} ${JSON.stringify(body)}`, async () => {
        const { status, json } = await post(app, op, body);
        assert.equal(status, 400);
        assert.deepEqual(Object.keys(json), ["error"]);
        assert.match(String(json.error), expected);
      });
    }
  });
});

Deno.test("createStagingApp() refuses a body it would misread instead of storing it", async (t) => {
  const ingest = JSON.stringify({
    namespace: NS,
    id: "trace-doc-1",
    text: "x",
  });
  const cases: [string, RequestInit, number, RegExp][] = [
    [
      "bytes that are not UTF-8",
      {
        headers: { "content-type": "application/json" },
        body: new Uint8Array([
          ...new TextEncoder().encode(ingest.slice(0, -3)),
          0xff,
          0xfe,
          ...new TextEncoder().encode('"}'),
        ]),
      },
      400,
      /^Cannot read the request: the body is not valid UTF-8$/,
    ],
    [
      "another declared charset",
      {
        headers: { "content-type": "application/json; charset=latin1" },
        body: ingest,
      },
      415,
      /charset "latin1" is not supported; send UTF-8$/,
    ],
    [
      "an unknown content coding",
      {
        headers: {
          "content-type": "application/json",
          "content-encoding": "br",
        },
        body: ingest,
      },
      415,
      /Content-Encoding "br" is not supported here/,
    ],
    [
      "JSON sent as text/plain",
      { headers: { "content-type": "text/plain" }, body: ingest },
      415,
      /^Cannot read the request: Content-Type "text\/plain" is not accepted; send Content-Type: application\/json$/,
    ],
    [
      "JSON sent as a form",
      {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: ingest,
      },
      415,
      /Content-Type "application\/x-www-form-urlencoded" is not accepted; send Content-Type: application\/json$/,
    ],
    [
      "a JSON-like media type",
      { headers: { "content-type": "application/jsonx" }, body: ingest },
      415,
      /Content-Type "application\/jsonx" is not accepted/,
    ],
  ];
  await withApp(null, async (app) => {
    for (const [name, init, status, expected] of cases) {
      await t.step(name, async () => {
        const response = await app.request("/ingest", {
          method: "POST",
          ...init,
        });
        assert.equal(response.status, status);
        const json = await response.json();
        assert.deepEqual(Object.keys(json), ["error"]);
        assert.match(String(json.error), expected);
      });
    }
    assert.deepEqual(await inventory(app), [true, 0, 0, 0]);
  });
});

Deno.test("createStagingApp() takes application/json with or without a UTF-8 charset", async (t) => {
  await withApp(null, async (app) => {
    for (
      const type of ["application/json", "Application/JSON; charset=utf-8"]
    ) {
      await t.step(type, async () => {
        const response = await app.request("/inventory", {
          method: "POST",
          headers: { "content-type": type },
          body: JSON.stringify({ namespace: NS }),
        });
        assert.equal(response.status, 200);
      });
    }
  });
});

Deno.test("createStagingApp() answers 404 for other paths and 405 for other methods", async () => {
  await withApp(null, async (app) => {
    const missing = await app.request("/reset", { method: "POST", body: "{}" });
    assert.equal(missing.status, 404);
    assert.match((await missing.json()).error, /no such operation/);
    const wrong = await app.request("/inventory", { method: "GET" });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "POST");
    assert.match((await wrong.json()).error, /use POST/);
  });
});

Deno.test("createStagingApp() refuses bodies over 1 MiB", async () => {
  await withApp(null, async (app) => {
    const text = "a".repeat(1024 * 1024 + 1);
    const { status, json } = await post(app, "ingest", {
      namespace: NS,
      id: "trace-doc-big",
      text,
    });
    assert.equal(status, 413);
    assert.match(
      String(json.error),
      /exceeds 1048576 bytes; send a smaller body$/,
    );
  });
});

Deno.test("createStagingApp() logs requests without document or query text", async () => {
  await withApp(null, async (app, logs) => {
    await post(app, "ingest", {
      namespace: NS,
      id: "trace-doc-1",
      text: DOC_TEXT,
    });
    await post(app, "query", { namespace: NS, query: MARKER });
    await post(app, "delete", {
      namespace: NS,
      ids: ["trace-doc-1", "trace-doc-2"],
    });
    await post(app, "query", { namespace: NS, query: MARKER, bogus: MARKER });
    await post(app, "query", { namespace: "line\nbreak", query: MARKER });
    assert.equal(logs.length, 5);
    assert.match(
      logs[0] ?? "",
      /^POST \/ingest 200 \d+\.\dms namespace=trace-test-r1 ids=1$/,
    );
    assert.match(
      logs[1] ?? "",
      /^POST \/query 200 \d+\.\dms namespace=trace-test-r1$/,
    );
    assert.match(
      logs[2] ?? "",
      /^POST \/delete 200 \d+\.\dms namespace=trace-test-r1 ids=2$/,
    );
    assert.match(logs[3] ?? "", /^POST \/query 400 \d+\.\dms$/);
    assert.match(
      logs[4] ?? "",
      /^POST \/query 200 \d+\.\dms namespace="line\\nbreak"$/,
    );
    for (const line of logs) {
      assert.ok(!line.includes(MARKER) && !line.includes("Synthetic"), line);
      assert.ok(!line.includes("\n"), "one line per request");
    }
  });
});

Deno.test("createStagingApp() turns internal failures into a generic 500", async () => {
  await withApp(null, async (app, logs, pipeline) => {
    pipeline.close();
    const { status, json } = await post(app, "ingest", {
      namespace: NS,
      id: "trace-doc-1",
      text: DOC_TEXT,
    });
    assert.equal(status, 500);
    assert.deepEqual(json, { error: "internal error" });
    assert.match(logs[0] ?? "", /^POST \/ingest 500 /);
  });
});

Deno.test("createStagingApp() with vector-resurrect shows the vector again after the delay", async () => {
  await withApp("vector-resurrect", async (app) => {
    await post(app, "ingest", {
      namespace: NS,
      id: "trace-doc-1",
      text: DOC_TEXT,
    });
    await post(app, "query", { namespace: NS, query: MARKER });
    await post(app, "delete", { namespace: NS, ids: ["trace-doc-1"] });
    assert.deepEqual(await inventory(app), [true, 0, 0, 0]);
    await delay(200);
    assert.deepEqual(await inventory(app), [true, 0, 1, 0]);
    await post(app, "delete", { namespace: NS, ids: ["trace-doc-1"] });
    await delay(200);
    assert.deepEqual(await inventory(app), [true, 0, 0, 0]);
  }, 50);
});

Deno.test("createStagingApp() with slow-vector drops the vector after the delay", async () => {
  await withApp("slow-vector", async (app) => {
    await post(app, "ingest", {
      namespace: NS,
      id: "trace-doc-1",
      text: DOC_TEXT,
    });
    await post(app, "delete", { namespace: NS, ids: ["trace-doc-1"] });
    assert.deepEqual(await inventory(app), [true, 0, 1, 0]);
    await delay(200);
    assert.deepEqual(await inventory(app), [true, 0, 0, 0]);
  }, 50);
});

Deno.test("createStagingApp() with stale-cache keeps the cached answer", async () => {
  await withApp("stale-cache", async (app) => {
    await post(app, "ingest", {
      namespace: NS,
      id: "trace-doc-1",
      text: DOC_TEXT,
    });
    await post(app, "query", { namespace: NS, query: MARKER });
    await post(app, "delete", { namespace: NS, ids: ["trace-doc-1"] });
    await post(app, "delete", { namespace: NS, ids: ["trace-doc-1"] });
    await delay(100);
    assert.deepEqual(await inventory(app), [true, 0, 0, 1]);
    const answer = await post(app, "query", { namespace: NS, query: MARKER });
    assert.ok(String(answer.json.text).includes(MARKER));
  }, 50);
});

Deno.test("createStagingApp() with partial-inventory reports complete: false", async () => {
  await withApp("partial-inventory", async (app) => {
    assert.deepEqual(await inventory(app), [false, 0, 0, 0]);
  });
});

Deno.test("createStagingApp() refuses foreign Host headers, cross-site requests and bodies without Content-Type", async (t) => {
  await withApp(null, async (app) => {
    const body = JSON.stringify({ namespace: NS });
    const cases: [string, Record<string, string>, number][] = [
      ["a foreign Host", {
        "content-type": "application/json",
        host: "evil.example:8787",
      }, 403],
      ["a cross-site Origin", {
        "content-type": "text/plain",
        origin: "https://evil.example",
      }, 403],
      ["Sec-Fetch-Site: cross-site", {
        "content-type": "text/plain",
        "sec-fetch-site": "cross-site",
      }, 403],
      ["no Content-Type", {}, 415],
    ];
    for (const [name, headers, status] of cases) {
      await t.step(name, async () => {
        const response = await app.request("/inventory", {
          method: "POST",
          headers,
          body: new TextEncoder().encode(body),
        });
        assert.equal(response.status, status);
        assert.equal(typeof (await response.json()).error, "string");
      });
    }
    await t.step("a loopback Host is served", async () => {
      const response = await app.request("/inventory", {
        method: "POST",
        headers: { "content-type": "application/json", host: "127.0.0.1:8787" },
        body,
      });
      assert.equal(response.status, 200);
    });
  });
});

Deno.test("createStagingApp() answers 507 past its memory limits, and takes documents again once records are deleted", async (t) => {
  const cases: [string, Partial<MemoryLimits>, RegExp][] = [
    [
      "namespaces",
      { namespaces: 2 },
      /^Cannot ingest: the memory holds its limit of 2 namespaces; delete records \(POST \/delete\) or restart the demo$/,
    ],
    [
      "records per namespace",
      { recordsPerNamespace: 2 },
      /^Cannot ingest: the namespace holds its limit of 2 records; delete records/,
    ],
    [
      // Each small document holds some 1.1 KB (text, id and a 1 KiB vector).
      "total bytes",
      { totalBytes: 2_500 },
      /^Cannot ingest: the memory would pass its limit of 2500 bytes; delete records/,
    ],
  ];
  for (const [name, limits, expected] of cases) {
    await t.step(name, async () => {
      const pipeline = new MemoryPipeline(demoBehaviour(null), { limits });
      try {
        const app = createStagingApp(pipeline);
        // Namespaces a, b; then a third (namespace bound) or a third record (others).
        const writes = limits.namespaces
          ? [["a", "1"], ["b", "1"], ["c", "1"]]
          : [["a", "1"], ["a", "2"], ["a", "3"]];
        const statuses = [];
        for (const [namespace, id] of writes) {
          const answer = await post(app, "ingest", {
            namespace,
            id,
            text: "x",
          });
          statuses.push(answer.status);
          if (answer.status !== 200) {
            assert.match(String(answer.json.error), expected);
          }
        }
        assert.deepEqual(statuses, [200, 200, 507]);
        const [namespace, id] = writes[1]!;
        // Replacing a held record is not a new one, and frees what it
        // replaces: at the byte bound, one no larger still fits.
        assert.equal(
          (await post(app, "ingest", { namespace, id, text: "y" })).status,
          200,
        );
        if (limits.totalBytes) {
          const larger = await post(app, "ingest", {
            namespace,
            id,
            text: "y".repeat(500),
          });
          assert.equal(larger.status, 507);
          assert.match(String(larger.json.error), expected);
        }
        await post(app, "delete", { namespace, ids: [id] });
        const [lastNamespace, lastId] = writes[2]!;
        const again = await post(app, "ingest", {
          namespace: lastNamespace,
          id: lastId,
          text: "x",
        });
        assert.equal(again.status, 200);
      } finally {
        pipeline.close();
      }
    });
  }
});

import assert from "node:assert/strict";
import {
  type Context,
  context,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  JsonTraceSerializer,
  ProtobufTraceSerializer,
} from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { TraceDb } from "../lib/db.ts";
import { MAX_BATCH_EVENTS } from "../lib/obs/ingest/mod.ts";
import { counterSnapshot, initializeObs } from "../lib/obs/mod.ts";
import { decodeOtlpTraces, mapOtlpSpans } from "../lib/obs/otlp/mod.ts";
import { createOtlpApi, type OtlpApiDeps } from "../routes/otlp.ts";
import { withDb, withServer } from "./_helpers.ts";

const PROMPT = "SECRET-PROMPT-what-did-alice-say";
const QUERY = "SECRET-QUERY-alice-preferences";
const DOC_TEXT = "SECRET-DOC-alice-likes-tea";
const TOOL_ARGS = "SECRET-ARGS-city-paris";
const SECRETS = [PROMPT, QUERY, DOC_TEXT, TOOL_ARGS];
const NOW = Date.parse("2026-09-01T12:00:00Z");

/** Records a small agent turn (agent → memory search, tool call, chat) through `exporter`. */
async function recordTurn(exporter: SpanExporter): Promise<void> {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": "support-bot",
      "tenant.id": "acme",
      "deployment.environment": "test",
    }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer("trace-tests", "1.0.0");
  const scope = {
    "gen_ai.agent.id": "agent-7",
    "gen_ai.conversation.id": "thread-9",
    "user.id": "user-3",
  };
  const agent = tracer.startSpan("invoke_agent support", {
    attributes: { ...scope, "gen_ai.operation.name": "invoke_agent" },
  }, ROOT_CONTEXT);
  const inAgent: Context = trace.setSpan(context.active(), agent);
  tracer.startSpan("search_memory prefs", {
    attributes: {
      ...scope,
      "gen_ai.operation.name": "search_memory",
      "gen_ai.memory.store.id": "store-1",
      "gen_ai.memory.query.text": QUERY,
      "gen_ai.retrieval.documents": JSON.stringify([
        { id: "mem-a", score: 0.91, content: DOC_TEXT },
        { id: "mem-b", score: 0.42, content: "other" },
      ]),
      "app.unlisted_secret_key": 1,
      "custom.prompt_copy": PROMPT,
    },
  }, inAgent).end();
  const tool = tracer.startSpan("execute_tool weather", {
    attributes: {
      ...scope,
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "weather",
      "gen_ai.tool.call.arguments": TOOL_ARGS,
    },
  }, inAgent);
  tool.setStatus({ code: SpanStatusCode.OK });
  tool.end();
  const chat = tracer.startSpan("chat gpt", {
    attributes: {
      ...scope,
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-x",
      "gen_ai.input.messages": JSON.stringify([{
        role: "user",
        parts: [{ content: PROMPT }],
      }]),
      "gen_ai.response.finish_reasons": ["stop"],
    },
  }, inAgent);
  chat.setStatus({ code: SpanStatusCode.ERROR, message: "rate limited" });
  chat.end();
  agent.end();
  await provider.forceFlush();
  await provider.shutdown();
}

/** The finished spans of one recorded turn. */
async function turnSpans(): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  let spans: ReadableSpan[] = [];
  const keep: SpanExporter = {
    export: (batch, done) => {
      spans = [...spans, ...batch];
      exporter.export(batch, done);
    },
    shutdown: () => Promise.resolve(),
  };
  await recordTurn(keep);
  return spans;
}

interface Row {
  [key: string]: unknown;
  meta: {
    resources: { type: string; id: string; role?: string }[];
    attributes: Record<string, unknown>;
    selection: {
      strategy?: string;
      candidates: {
        ref: { id: string };
        rank: number | null;
        score: number | null;
        selected: boolean;
      }[];
    } | null;
  };
}

async function eventRows(db: TraceDb): Promise<Row[]> {
  const result = await db.client.execute(
    "SELECT e.*, p.content AS preview FROM obs_events e LEFT JOIN obs_previews p ON p.seq = e.seq ORDER BY e.seq",
  );
  return result.rows.map((row) => {
    const plain = Object.fromEntries(Object.entries(row));
    return { ...plain, meta: JSON.parse(String(row.meta)) } as Row;
  });
}

function byKind(rows: Row[], kind: string): Row {
  const row = rows.find((r) => r.kind === kind);
  assert.ok(
    row,
    `no ${kind} event among ${rows.map((r) => r.kind).join(", ")}`,
  );
  return row;
}

async function withApi<T>(
  fn: (app: ReturnType<typeof createOtlpApi>, db: TraceDb) => Promise<T>,
  deps: Omit<OtlpApiDeps, "db"> = {},
): Promise<T> {
  return await withDb(async (db) => {
    await initializeObs(db);
    return await fn(createOtlpApi({ db, now: () => NOW, ...deps }), db);
  });
}

function post(
  app: ReturnType<typeof createOtlpApi>,
  body: BodyInit,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(app.request("/v1/traces", {
    method: "POST",
    headers: { "content-type": contentType, ...headers },
    body,
  }));
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Posts one OTLP/JSON span with valid ids and the `fields` given. */
function postSpan(
  app: Parameters<typeof post>[0],
  fields: Record<string, unknown>,
): Promise<Response> {
  const span = { traceId: "01".repeat(16), spanId: "02".repeat(8), ...fields };
  return post(
    app,
    JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }),
    "application/json",
  );
}

function jsonBody(spans: ReadableSpan[]): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(JsonTraceSerializer.serializeRequest(spans)!);
}

function protobufBody(spans: ReadableSpan[]): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(ProtobufTraceSerializer.serializeRequest(spans)!);
}

Deno.test("createOtlpApi() ingests spans sent by the OTLP/HTTP exporter", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createOtlpApi({ db });
    await withServer(app.fetch, async (server) => {
      const exporter = new OTLPTraceExporter({
        url: `${server.url}/v1/traces`,
      });
      await recordTurn(exporter);
    });
    const rows = await eventRows(db);
    assert.equal(rows.length, 4);
    for (const row of rows) {
      assert.equal(row.application_id, "acme");
      assert.equal(row.agent_id, "agent-7");
      assert.equal(row.thread_id, "thread-9");
      assert.equal(row.user_id, "user-3");
      assert.match(String(row.event_id), /^otlp:[0-9a-f]{32}:[0-9a-f]{16}$/);
    }
    const agent = byKind(rows, "agent_invocation");
    const search = byKind(rows, "memory_search");
    assert.equal(search.root_trace_id, agent.root_trace_id);
    assert.equal(search.parent_event_id, agent.event_id);
    assert.equal(search.memory_id, "store-1");
    assert.equal(search.store, "trace");
    assert.deepEqual(search.meta.resources, [
      { type: "memory_store", id: "store-1", role: "referenced" },
      { type: "memory_record", id: "mem-a", role: "retrieved" },
      { type: "memory_record", id: "mem-b", role: "retrieved" },
    ]);
    assert.deepEqual(
      search.meta.selection?.candidates.map((
        c,
      ) => [c.ref.id, c.rank, c.score, c.selected]),
      [["mem-a", 1, 0.91, true], ["mem-b", 2, 0.42, true]],
    );
    const tool = byKind(rows, "tool_call");
    assert.equal(tool.tool, "weather");
    assert.equal(tool.store, "tool_log");
    assert.equal(tool.status, "ok");
    assert.equal(tool.success, 1);
    const chat = byKind(rows, "llm_call");
    assert.equal(chat.store, "conversation");
    assert.equal(chat.status, "error");
    assert.equal(chat.success, 0);
    assert.equal(chat.meta.attributes["gen_ai.request.model"], "gpt-x");
    assert.equal(
      chat.meta.attributes["gen_ai.response.finish_reasons"],
      "stop",
    );
    assert.equal(chat.meta.attributes["service.name"], "support-bot");
    assert.ok(Number(chat.ended_at) >= Number(chat.started_at));
  });
});

Deno.test("createOtlpApi() maps protobuf and JSON bodies to identical events", async () => {
  const spans = await turnSpans();
  const viaJson = await withApi(async (app, db) => {
    const response = await post(app, jsonBody(spans), "application/json");
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.deepEqual(await response.json(), {});
    return await eventRows(db);
  });
  const viaProtobuf = await withApi(async (app, db) => {
    const response = await post(
      app,
      protobufBody(spans),
      "application/x-protobuf",
    );
    assert.equal(response.status, 200);
    assert.equal(
      response.headers.get("content-type"),
      "application/x-protobuf",
    );
    const decoded = ProtobufTraceSerializer.deserializeResponse(
      new Uint8Array(await response.arrayBuffer()),
    );
    assert.equal(decoded.partialSuccess, undefined);
    // The same spans again in the other encoding are an identical retry: nothing new is written.
    const retry = await post(app, jsonBody(spans), "application/json");
    assert.equal(retry.status, 200);
    const rows = await eventRows(db);
    assert.equal(rows.length, spans.length);
    return rows;
  });
  assert.equal(viaJson.length, 4);
  assert.deepEqual(viaProtobuf, viaJson);
});

Deno.test("createOtlpApi() accepts a gzip-compressed body", async () => {
  const spans = await turnSpans();
  await withApi(async (app, db) => {
    const response = await post(
      app,
      await gzip(protobufBody(spans)),
      "application/x-protobuf",
      {
        "content-encoding": "gzip",
      },
    );
    assert.equal(response.status, 200);
    assert.equal((await eventRows(db)).length, 4);
  });
});

Deno.test("createOtlpApi() keeps content attributes in previews only", async () => {
  const spans = await turnSpans();
  await withApi(async (app, db) => {
    assert.equal(
      (await post(app, jsonBody(spans), "application/json")).status,
      200,
    );
    const rows = await eventRows(db);
    const previews = rows.map((row) => String(row.preview ?? "")).join("\n");
    for (const secret of SECRETS) {
      assert.ok(previews.includes(secret), `${secret} missing from previews`);
    }
    assert.match(
      String(byKind(rows, "llm_call").preview),
      /^gen_ai\.input\.messages: /,
    );
    assert.equal(byKind(rows, "agent_invocation").preview, null);
    // Nothing outside obs_previews may hold content: index, resources, envelopes, state.
    for (
      const table of [
        "obs_events",
        "obs_resources",
        "obs_envelopes",
        "obs_state",
      ]
    ) {
      const dump = JSON.stringify(
        (await db.client.execute(`SELECT * FROM ${table}`)).rows,
      );
      for (const secret of SECRETS) {
        assert.ok(!dump.includes(secret), `${secret} leaked into ${table}`);
      }
    }
    const search = byKind(rows, "memory_search");
    assert.equal("custom.prompt_copy" in search.meta.attributes, false);
    assert.equal(search.meta.attributes["app.unlisted_secret_key"], 1);
  });
});

Deno.test("createOtlpApi() refuses other content types with 415 and other methods with 405", async () => {
  await withApi(async (app) => {
    const response = await post(
      app,
      "a=b",
      "application/x-www-form-urlencoded",
    );
    assert.equal(response.status, 415);
    assert.match(
      (await response.json()).error.message,
      /Content-Type "application\/x-www-form-urlencoded"/,
    );
    const coding = await post(app, "{}", "application/json", {
      "content-encoding": "br",
    });
    assert.equal(coding.status, 415);
    const get = await app.request("/v1/traces");
    assert.equal(get.status, 405);
    assert.equal(get.headers.get("allow"), "POST");
  });
});

Deno.test("createOtlpApi() refuses undecodable bodies with 400 and writes nothing", async () => {
  await withApi(async (app, db) => {
    const json = await post(app, "{not json", "application/json");
    assert.equal(json.status, 400);
    const status = await json.json();
    assert.equal(status.code, 3);
    assert.equal(status.error.code, "invalid_request");
    assert.match(
      status.message,
      /^Cannot decode the OTLP trace request: body is not valid JSON/,
    );
    assert.ok(!status.message.includes("not json"), "the body is not echoed");
    const array = await post(app, "[]", "application/json");
    assert.equal(array.status, 400);
    assert.match(
      (await array.json()).message,
      /body must be a JSON object \(an ExportTraceServiceRequest\)/,
    );
    const protobuf = await post(
      app,
      new Uint8Array([0x0a, 0xff, 0xff, 0x01]),
      "application/x-protobuf",
    );
    assert.equal(protobuf.status, 400);
    assert.equal(
      protobuf.headers.get("content-type"),
      "application/x-protobuf",
    );
    const badId = await post(
      app,
      JSON.stringify({
        resourceSpans: [{
          scopeSpans: [{
            spans: [{ traceId: "xyz", spanId: "0102030405060708" }],
          }],
        }],
      }),
      "application/json",
    );
    assert.equal(badId.status, 400);
    assert.match(
      (await badId.json()).message,
      /resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.traceId/,
    );
    // A time past the unsigned 64-bit range is named as such.
    const farFuture = await postSpan(app, {
      startTimeUnixNano: "99999999999999999999999",
    });
    assert.equal(farFuture.status, 400);
    assert.match(
      (await farFuture.json()).message,
      /spans\[0\]\.startTimeUnixNano: must be from 0 to 18446744073709551615 \(an unsigned 64-bit integer\)$/,
    );
    // Fields the schema checks are named in the same form as those above.
    const badValue = await postSpan(app, {
      attributes: [{
        key: "k",
        value: { arrayValue: { values: [{ stringValue: 3 }] } },
      }],
    });
    assert.equal(badValue.status, 400);
    assert.equal(
      (await badValue.json()).message,
      "Cannot decode the OTLP trace request: resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.arrayValue.values[0].stringValue: must be a string",
    );
    const corruptGzip = await post(
      app,
      new Uint8Array([1, 2, 3, 4]),
      "application/json",
      {
        "content-encoding": "gzip",
      },
    );
    assert.equal(corruptGzip.status, 400);
    // 17 levels: past the bound of 16, within the JSON parser's 64.
    const depth = 17;
    const nested = '{"arrayValue":{"values":['.repeat(depth) +
      '{"boolValue":true}' + "]}}".repeat(depth);
    const deep = await post(
      app,
      `{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":${nested}}]}}]}`,
      "application/json",
    );
    assert.equal(deep.status, 400);
    assert.match((await deep.json()).message, /nested deeper than 16 levels/);
    assert.equal((await eventRows(db)).length, 0);
  });
});

Deno.test("createOtlpApi() answers an empty request with success in both encodings", async () => {
  await withApi(async (app, db) => {
    for (
      const [body, type] of [
        ["", "application/json"],
        [" \n", "application/json"],
        ["{}", "application/json"],
        [new Uint8Array(), "application/x-protobuf"],
      ] as const
    ) {
      const response = await post(app, body, type);
      assert.equal(response.status, 200, `${type} ${JSON.stringify(body)}`);
      assert.equal(response.headers.get("content-type"), type);
      await response.body?.cancel();
    }
    // Whitespace around a value is still JSON to parse, not an empty body.
    const stray = await post(app, " x ", "application/json");
    assert.equal(stray.status, 400);
    assert.equal((await eventRows(db)).length, 0);
  });
});

Deno.test("decodeOtlpTraces() names a missing required field as required", () => {
  const message = decodeJsonError({
    resourceSpans: [{
      scopeSpans: [{ spans: [{ traceId: "01".repeat(16) }] }],
    }],
  });
  assert.equal(
    message,
    "Cannot decode the OTLP trace request: resourceSpans[0].scopeSpans[0].spans[0].spanId: is required",
  );
  assert.match(
    decodeJsonError({ resourceSpans: [{ scopeSpans: [{ spans: [3] }] }] }),
    /spans\[0\]: must be a span object$/,
  );
  assert.match(
    decodeJsonError({
      resourceSpans: [{ resource: { attributes: [{ value: {} }] } }],
    }),
    /resource\.attributes\[0\]\.key: is required$/,
  );
});

Deno.test("decodeOtlpTraces() names the field that is no object, never its value", () => {
  const secret = "SECRET-in-the-wrong-place";
  const span = { traceId: "01".repeat(16), spanId: "02".repeat(8) };
  for (
    const [request, field] of [
      [
        { resourceSpans: [secret] },
        "resourceSpans[0]: must be a ResourceSpans object",
      ],
      [
        { resourceSpans: [{ resource: secret }] },
        "resourceSpans[0].resource: must be a Resource object",
      ],
      [
        { resourceSpans: [{ scopeSpans: [secret] }] },
        "resourceSpans[0].scopeSpans[0]: must be a ScopeSpans object",
      ],
      [
        { resourceSpans: [{ scopeSpans: [{ scope: secret }] }] },
        "resourceSpans[0].scopeSpans[0].scope: must be an InstrumentationScope object",
      ],
      [
        {
          resourceSpans: [{
            scopeSpans: [{ spans: [{ ...span, status: secret }] }],
          }],
        },
        "resourceSpans[0].scopeSpans[0].spans[0].status: must be a Status object",
      ],
      [
        {
          resourceSpans: [{
            scopeSpans: [{ spans: [{ ...span, events: [secret] }] }],
          }],
        },
        "resourceSpans[0].scopeSpans[0].spans[0].events[0]: must be a span event object",
      ],
      [
        {
          resourceSpans: [{
            resource: {
              attributes: [{ key: "k", value: { arrayValue: secret } }],
            },
          }],
        },
        "resourceSpans[0].resource.attributes[0].value.arrayValue: must be an ArrayValue object",
      ],
    ] as const
  ) {
    assert.equal(
      decodeJsonError(request),
      `Cannot decode the OTLP trace request: ${field}`,
    );
  }
});

Deno.test("decodeOtlpTraces() names the first few bad spans and counts the rest", () => {
  const span = (fields: Record<string, unknown>) => ({
    traceId: "01".repeat(16),
    spanId: "02".repeat(8),
    ...fields,
  });
  const request = (spans: unknown[]) => ({
    resourceSpans: [{ scopeSpans: [{ spans }] }],
  });
  const at = (k: number) => `resourceSpans[0].scopeSpans[0].spans[${k}]`;
  // Schema problems: the first of each span, three spans named.
  assert.equal(
    decodeJsonError(request([
      span({ name: 1, kind: {} }),
      span({}),
      span({ kind: {} }),
      span({ name: 2 }),
      span({ name: 3 }),
      span({ name: 4 }),
    ])),
    `Cannot decode the OTLP trace request: ${at(0)}.name: must be a string; ${
      at(2)
    }.kind: must be one of SPAN_KIND_UNSPECIFIED, SPAN_KIND_INTERNAL, SPAN_KIND_SERVER, SPAN_KIND_CLIENT, SPAN_KIND_PRODUCER, SPAN_KIND_CONSUMER (or an integer from 0 to 5); ${
      at(3)
    }.name: must be a string; and 2 more spans`,
  );
  // The decoder's own checks: every span is tried.
  assert.equal(
    decodeJsonError(request([
      span({ traceId: "xyz" }),
      span({}),
      span({ spanId: "00".repeat(8) }),
    ])),
    `Cannot decode the OTLP trace request: ${
      at(0)
    }.traceId: must be a non-zero 16-byte id (32 hex digits); ${
      at(2)
    }.spanId: must be a non-zero 8-byte id (16 hex digits)`,
  );
  // Both at once: a span the schema refuses does not hide one with a bad id.
  assert.equal(
    decodeJsonError(request([
      span({}),
      span({ traceId: "xyz" }),
      span({ name: 1 }),
      span({ spanId: "00".repeat(8) }),
      span({ kind: {} }),
    ])),
    `Cannot decode the OTLP trace request: ${
      at(1)
    }.traceId: must be a non-zero 16-byte id (32 hex digits); ${
      at(2)
    }.name: must be a string; ${
      at(3)
    }.spanId: must be a non-zero 8-byte id (16 hex digits); and 1 more span`,
  );
});

function decodeJsonError(request: unknown): string {
  try {
    decodeOtlpTraces(
      new TextEncoder().encode(JSON.stringify(request)),
      "json",
    );
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail("the request was accepted");
}

/** `bytes` with the first byte of `marker`'s first occurrence made 0xFF, which UTF-8 never holds. */
function withInvalidUtf8(bytes: Uint8Array, marker: string): Uint8Array {
  const needle = new TextEncoder().encode(marker);
  const out = bytes.slice();
  const at = out.findIndex((_, i) => needle.every((b, j) => out[i + j] === b));
  assert.ok(at >= 0, `${marker} is in the body`);
  out[at] = 0xff;
  return out;
}

function decodeError(body: Uint8Array): string {
  try {
    decodeOtlpTraces(body, "protobuf");
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail("the body was accepted");
}

Deno.test("decodeOtlpTraces() names the protobuf string field that is not UTF-8", async () => {
  const spans = await turnSpans();
  const body = protobufBody(spans);
  const chat = spans.findIndex((span) => span.name === "chat gpt");
  const tool = spans.findIndex((span) => span.name === "execute_tool weather");
  const toolName = Object.keys(spans[tool]!.attributes).indexOf(
    "gen_ai.tool.name",
  );
  const where = "Cannot decode the OTLP trace request: resourceSpans[0]";
  const rule = "must be valid UTF-8 (protobuf strings are UTF-8 text)";
  assert.equal(
    decodeError(withInvalidUtf8(body, "rate limited")),
    `${where}.scopeSpans[0].spans[${chat}].status.message: ${rule}`,
  );
  assert.equal(
    decodeError(withInvalidUtf8(body, "chat gpt")),
    `${where}.scopeSpans[0].spans[${chat}].name: ${rule}`,
  );
  assert.equal(
    decodeError(withInvalidUtf8(body, "gen_ai.tool.name")),
    `${where}.scopeSpans[0].spans[${tool}].attributes[${toolName}].key: ${rule}`,
  );
  assert.match(
    decodeError(withInvalidUtf8(body, "support-bot")),
    /resourceSpans\[0\]\.resource\.attributes\[\d+\]\.value\.stringValue: must be valid UTF-8/,
  );
  // A field the decoder skips (unknown to it) is not read, so not refused.
  const unknownField = new Uint8Array([0x12, 0x01, 0xff]);
  assert.equal(
    decodeOtlpTraces(new Uint8Array([...body, ...unknownField]), "protobuf")
      .length,
    spans.length,
  );
  // Bytes that are no protobuf keep the decoder's own reason.
  assert.match(
    decodeError(new Uint8Array([0x0a, 0xff, 0xff, 0x01])),
    /body is not a protobuf message \(/,
  );
});

Deno.test("createOtlpApi() refuses oversized bodies with 413, compressed or not", async () => {
  const spans = await turnSpans();
  const body = jsonBody(spans);
  await withApi(async (app, db) => {
    const plain = await post(app, body, "application/json");
    assert.equal(plain.status, 413);
    assert.match((await plain.json()).message, /exceeds 1024 bytes/);
    // Small on the wire, too large once inflated.
    const bomb = await gzip(new TextEncoder().encode(" ".repeat(8192) + "{}"));
    assert.ok(bomb.byteLength < 1024);
    const inflated = await post(app, bomb, "application/json", {
      "content-encoding": "gzip",
    });
    assert.equal(inflated.status, 413);
    assert.match(
      (await inflated.json()).message,
      /decompressed request body exceeds 4096 bytes/,
    );
    assert.equal((await eventRows(db)).length, 0);
  }, { limits: { maxBytes: 1024, maxDecodedBytes: 4096 } });
});

Deno.test("createOtlpApi() refuses the whole batch when one span cannot be mapped", async () => {
  const span = (id: string, attributes: Record<string, string>) => ({
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: id,
    name: "op",
    attributes: Object.entries(attributes).map(([key, value]) => ({
      key,
      value: { stringValue: value },
    })),
  });
  const request = (resource: Record<string, string>) =>
    JSON.stringify({
      resourceSpans: [{
        resource: {
          attributes: Object.entries(resource).map(([key, value]) => ({
            key,
            value: { stringValue: value },
          })),
        },
        scopeSpans: [{
          spans: [
            span("00f067aa0ba902b7", { "gen_ai.agent.id": "a1" }),
            span("00f067aa0ba902b8", { "gen_ai.agent.id": "x".repeat(300) }),
          ],
        }],
      }],
    });
  await withApi(async (app, db) => {
    const tooLong = await post(
      app,
      request({ "tenant.id": "acme" }),
      "application/json",
    );
    assert.equal(tooLong.status, 400);
    assert.match(
      (await tooLong.json()).message,
      /^Cannot map OTLP span 1 \(resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[1\]\): agent_id: must be at most 256 characters/,
    );
    const noTenant = await post(app, request({}), "application/json");
    assert.equal(noTenant.status, 400);
    const both = (await noTenant.json()).message;
    // Every span is tried: both are named, the shared remedy said once.
    assert.equal(
      both,
      "Cannot map 2 of 2 OTLP spans: span 0 (resourceSpans[0].scopeSpans[0].spans[0]): application_id: the span has no tenant.id or application.id attribute and its resource no service.name; span 1 (resourceSpans[0].scopeSpans[0].spans[1]): application_id: the span has no tenant.id or application.id attribute and its resource no service.name; set one, or start the server with --default-application NAME, and resend the batch",
    );
    assert.equal((await eventRows(db)).length, 0);
  });
});

Deno.test("mapOtlpSpans() names the first few spans it cannot map and counts the rest", () => {
  const spans = decodeOtlpTraces(
    new TextEncoder().encode(JSON.stringify({
      resourceSpans: [{
        resource: {
          attributes: [{ key: "tenant.id", value: { stringValue: "acme" } }],
        },
        scopeSpans: [{
          spans: [0, 1, 2, 3, 4, 5].map((k) => ({
            traceId: "01".repeat(16),
            spanId: `0${k + 1}`.repeat(8),
            attributes: k === 1
              ? [{
                key: "gen_ai.agent.id",
                value: { stringValue: "a1" },
              }]
              : k === 3
              ? [{
                key: "gen_ai.agent.id",
                value: { stringValue: "x".repeat(300) },
              }]
              : [],
          })),
        }],
      }],
    })),
    "json",
  );
  const at = (k: number) =>
    `span ${k} (resourceSpans[0].scopeSpans[0].spans[${k}])`;
  assert.throws(
    () => mapOtlpSpans(spans),
    (error: Error) => {
      assert.equal(
        error.message,
        `Cannot map 5 of 6 OTLP spans: ${
          at(0)
        }: agent_id: the span has no gen_ai.agent.id, gen_ai.memory.store.id or service.name attribute; ${
          at(2)
        }: agent_id: the span has no gen_ai.agent.id, gen_ai.memory.store.id or service.name attribute; ${
          at(3)
        }: agent_id: must be at most 256 characters; and 2 more spans; fix them and resend the batch`,
      );
      return true;
    },
  );
});

Deno.test("mapOtlpSpans() maps OpenInference retriever and reranker spans", () => {
  const attr = (key: string, value: string | number) => ({
    key,
    value: typeof value === "string"
      ? { stringValue: value }
      : { doubleValue: value },
  });
  const body = JSON.stringify({
    resourceSpans: [{
      resource: {
        attributes: [
          attr("application.id", "app-1"),
          attr("service.name", "rag"),
        ],
      },
      scopeSpans: [{
        spans: [{
          traceId: "0AF7651916CD43DD8448EB211C80319C",
          spanId: "b7ad6b7169203331",
          name: "retrieve",
          kind: "SPAN_KIND_CLIENT",
          startTimeUnixNano: 1_788_000_000_000_000_000,
          endTimeUnixNano: "1788000000250000000",
          status: { code: 1 },
          attributes: [
            attr("openinference.span.kind", "RETRIEVER"),
            attr("session.id", "s-1"),
            attr("input.value", QUERY),
            attr("retrieval.documents.1.document.id", "d-2"),
            attr("retrieval.documents.1.document.score", 0.5),
            attr("retrieval.documents.0.document.id", "d-1"),
            attr("retrieval.documents.0.document.score", 0.9),
            attr("retrieval.documents.0.document.content", DOC_TEXT),
          ],
        }, {
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "b7ad6b7169203332",
          parentSpanId: "b7ad6b7169203331",
          name: "rerank",
          attributes: [
            attr("openinference.span.kind", "RERANKER"),
            attr("reranker.input_documents.0.document.id", "d-1"),
            attr("reranker.input_documents.1.document.id", "d-2"),
            attr("reranker.output_documents.0.document.id", "d-2"),
            attr("reranker.output_documents.0.document.score", 3.5),
          ],
        }],
      }],
    }],
  });
  const { events, warnings } = mapOtlpSpans(
    decodeOtlpTraces(new TextEncoder().encode(body), "json"),
  );
  const [retrieval, rerank] = events;
  assert.equal(retrieval?.kind, "retrieval");
  assert.equal(retrieval?.application_id, "app-1");
  assert.equal(retrieval?.agent_id, "rag");
  assert.equal(retrieval?.thread_id, "s-1");
  assert.equal(retrieval?.user_id, null);
  assert.equal(retrieval?.root_trace_id, "0af7651916cd43dd8448eb211c80319c");
  assert.equal(retrieval?.started_at, "2026-08-29T10:40:00.000Z");
  assert.equal(retrieval?.ended_at, "2026-08-29T10:40:00.250Z");
  assert.equal(retrieval?.success, true);
  assert.deepEqual(retrieval?.resources?.map((r) => r.id), ["d-1", "d-2"]);
  assert.deepEqual(
    retrieval?.selection?.candidates.map((c) => [c.ref.id, c.rank, c.score]),
    [["d-1", 1, 0.9], ["d-2", 2, 0.5]],
  );
  assert.match(
    String(retrieval?.preview),
    new RegExp(`${QUERY}[\\s\\S]*${DOC_TEXT}`),
  );
  assert.equal(JSON.stringify(retrieval?.attributes).includes(DOC_TEXT), false);
  assert.equal(rerank?.kind, "selection");
  assert.equal(
    rerank?.parent_event_id,
    "otlp:0af7651916cd43dd8448eb211c80319c:b7ad6b7169203331",
  );
  assert.deepEqual(
    rerank?.selection?.candidates.map((
      c,
    ) => [c.ref.id, c.selected, c.rank, c.score]),
    [["d-1", false, null, null], ["d-2", true, 1, 3.5]],
  );
  assert.deepEqual(warnings, [
    "2 spans had no gen_ai.agent.id; service.name was used as agent_id",
  ]);
});

Deno.test("createOtlpApi() reports fallbacks through partialSuccess and uses the default tenant", async () => {
  const body = JSON.stringify({
    resourceSpans: [{
      scopeSpans: [{
        spans: [{
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "00f067aa0ba902b7",
          attributes: [{
            key: "gen_ai.operation.name",
            value: { stringValue: "delete_memory" },
          }, {
            key: "gen_ai.memory.store.id",
            value: { stringValue: "store-2" },
          }, {
            key: "gen_ai.memory.record.id",
            value: { stringValue: "rec-5" },
          }],
        }, {
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "00f067aa0ba902b8",
          attributes: [],
        }],
      }],
      resource: {
        attributes: [{ key: "service.name", value: { stringValue: "svc" } }],
      },
    }],
  });
  await withApi(async (app, db) => {
    const response = await post(app, body, "application/json");
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      partialSuccess: {
        rejectedSpans: "0",
        errorMessage:
          '2 spans had no tenant.id or application.id; application_id "default-app" was taken from --default-application; ' +
          "1 span had no gen_ai.agent.id; service.name was used as agent_id",
      },
    });
    const rows = await eventRows(db);
    const deleted = byKind(rows, "memory_delete");
    assert.equal(deleted.application_id, "default-app");
    assert.equal(deleted.agent_id, null);
    assert.equal(deleted.memory_id, "store-2");
    assert.deepEqual(deleted.meta.resources, [
      { type: "memory_store", id: "store-2", role: "referenced" },
      { type: "memory_record", id: "rec-5", role: "deleted" },
    ]);
    assert.equal(byKind(rows, "span").agent_id, "svc");
  }, { defaultApplicationId: "default-app" });
});

Deno.test("createOtlpApi() counts and reports allowlisted attributes left out past the per-event bound", async () => {
  const attributes = Array.from({ length: 40 }, (_, i) => ({
    key: `app.note_${i}`,
    value: { stringValue: `n${i}` },
  }));
  const body = JSON.stringify({
    resourceSpans: [{
      resource: {
        attributes: [
          { key: "tenant.id", value: { stringValue: "app-1" } },
          { key: "service.name", value: { stringValue: "svc" } },
        ],
      },
      scopeSpans: [{
        spans: [{
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "00f067aa0ba902b7",
          attributes,
        }],
      }],
    }],
  });
  await withApi(async (app, db) => {
    const before = counterSnapshot().counts.attributes_dropped;
    const response = await post(app, body, "application/json");
    assert.equal(response.status, 200);
    const kept = Object.keys((await eventRows(db))[0]!.meta.attributes).length;
    assert.equal(kept, 32);
    // Identity and service.name come first; 40 app.* notes fill the rest.
    const dropped = counterSnapshot().counts.attributes_dropped - before;
    assert.ok(dropped > 0);
    const answer = await response.json();
    assert.match(
      answer.partialSuccess.errorMessage,
      new RegExp(`${dropped} attributes beyond 32 per span left out`),
    );
  });
});

Deno.test("createOtlpApi() answers a storage failure generically, in the request's encoding", async () => {
  const spans = await turnSpans();
  const logged: string[] = [];
  await withApi(async (app, db) => {
    await db.client.execute("DROP TABLE obs_state");
    const json = await post(app, jsonBody(spans), "application/json");
    assert.equal(json.status, 503);
    const status = await json.json();
    assert.equal(status.code, 14);
    assert.deepEqual(status.error, {
      code: "storage",
      message: "The trace index is unavailable; check the server log",
    });
    const protobuf = await post(
      app,
      protobufBody(spans),
      "application/x-protobuf",
    );
    assert.equal(protobuf.status, 503);
    assert.equal(
      protobuf.headers.get("content-type"),
      "application/x-protobuf",
    );
    assert.equal(logged.length, 2);
    assert.match(logged[0]!, /^POST \/v1\/traces: StorageError: .*obs_state/);
  }, { log: (line) => logged.push(line) });
});

Deno.test("createOtlpApi() answers 413 for more spans than one batch may carry", async () => {
  const span = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "00f067aa0ba902b7",
    name: "op",
  };
  const body = JSON.stringify({
    resourceSpans: [{
      scopeSpans: [{ spans: Array(MAX_BATCH_EVENTS + 1).fill(span) }],
    }],
  });
  await withApi(async (app, db) => {
    const response = await post(app, body, "application/json");
    assert.equal(response.status, 413);
    const status = await response.json();
    assert.equal(status.error.code, "payload_too_large");
    assert.match(
      status.message,
      new RegExp(`more than ${MAX_BATCH_EVENTS} spans; send smaller batches`),
    );
    assert.equal((await eventRows(db)).length, 0);
  });
});

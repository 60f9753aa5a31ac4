/**
 * OTLP attribute lists are checked the same way in both encodings: a key
 * repeated within one list, an `AnyValue` holding more than one value field
 * and an `intValue` outside int64 refuse the whole request (400, nothing
 * written) with a message naming the field and quoting no value. A NaN or
 * infinite `doubleValue` is stored by name but names no tenant or id.
 *
 * Each request is written once in the OTLP/JSON shape and sent both as JSON
 * and as protobuf, encoded here by hand from the upstream field numbers, so
 * the protobuf bodies do not depend on the receiver's own definitions.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createOtlpApi } from "../routes/otlp.ts";
import { withDb } from "./_helpers.ts";

type Json = null | boolean | number | string | Json[] | {
  [key: string]: Json;
};
type JsonObject = { [key: string]: Json };

const NOW = Date.parse("2026-09-01T12:00:00Z");
const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const SPAN = "resourceSpans[0].scopeSpans[0].spans[0]";
const PREFIX = "Cannot decode the OTLP trace request: ";
const UNIQUE = "keys must be unique within one attribute list";
const ONE_OF =
  "holds more than one of stringValue, boolValue, intValue, doubleValue, arrayValue, kvlistValue, bytesValue; an AnyValue holds exactly one";

const kv = (key: string, value: JsonObject): JsonObject => ({ key, value });
const str = (key: string, value: string) => kv(key, { stringValue: value });

interface Parts {
  resource?: Json[];
  scope?: Json[];
  span?: Json[];
  events?: Json[];
  links?: Json[];
}

/** One span with an agent, under a resource naming its tenant; `parts` add to each list. */
function request(parts: Parts = {}): JsonObject {
  return {
    resourceSpans: [{
      resource: {
        attributes: [
          str("service.name", "svc"),
          ...(parts.resource ?? [str("tenant.id", "app-1")]),
        ],
      },
      scopeSpans: [{
        scope: { name: "tests", attributes: parts.scope ?? [] },
        spans: [{
          traceId: TRACE_ID,
          spanId: "00f067aa0ba902b7",
          name: "chat",
          attributes: [str("gen_ai.agent.id", "bot"), ...(parts.span ?? [])],
          events: parts.events ?? [],
          links: parts.links ?? [],
        }],
      }],
    }],
  };
}

// ---- a minimal protobuf writer for ExportTraceServiceRequest ----

function varint(value: bigint): number[] {
  let rest = BigInt.asUintN(64, value);
  const out: number[] = [];
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return out;
}

function tag(field: number, wire: number): number[] {
  return varint(BigInt((field << 3) | wire));
}

function bytesField(field: number, payload: Uint8Array | number[]): number[] {
  return [...tag(field, 2), ...varint(BigInt(payload.length)), ...payload];
}

function textField(field: number, text: string): number[] {
  return bytesField(field, new TextEncoder().encode(text));
}

function hexBytes(hex: string): number[] {
  return hex.match(/../g)!.map((pair) => parseInt(pair, 16));
}

function get(value: Json | undefined, key: string): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value[key]
    : undefined;
}

function items(value: Json | undefined, key: string): Json[] {
  const list = get(value, key);
  return Array.isArray(list) ? list : [];
}

/** Fields in the order given here; JSON `null` is no field. */
function anyValue(value: Json | undefined): number[] {
  const out: number[] = [];
  const string = get(value, "stringValue");
  const bool = get(value, "boolValue");
  const int = get(value, "intValue");
  const double = get(value, "doubleValue");
  const bytes = get(value, "bytesValue");
  if (typeof string === "string") out.push(...textField(1, string));
  if (typeof bool === "boolean") out.push(...tag(2, 0), bool ? 1 : 0);
  if (int !== undefined && int !== null) {
    out.push(...tag(3, 0), ...varint(BigInt(`${int}`)));
  }
  if (double !== undefined && double !== null) {
    // "NaN" and "Infinity" become the doubles they name, as on the wire.
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, Number(double), true);
    out.push(...tag(4, 1), ...bytes);
  }
  const array = get(value, "arrayValue");
  if (array !== undefined) {
    out.push(...bytesField(
      5,
      items(array, "values").flatMap((item) => bytesField(1, anyValue(item))),
    ));
  }
  const kvlist = get(value, "kvlistValue");
  if (kvlist !== undefined) {
    out.push(...bytesField(6, keyValues(1, items(kvlist, "values"))));
  }
  if (typeof bytes === "string") {
    out.push(
      ...bytesField(7, Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))),
    );
  }
  return out;
}

/**
 * A `KeyValue` list. A value `{"$parts": [...]}` (protobuf only, JSON has no
 * such thing) sends `KeyValue.value` once per part, which protobuf merges.
 */
function keyValues(field: number, list: Json[]): number[] {
  return list.flatMap((item) => {
    const value = get(item, "value");
    const parts = get(value, "$parts");
    return bytesField(field, [
      ...textField(1, String(get(item, "key"))),
      ...(Array.isArray(parts) ? parts : [value]).flatMap((part) =>
        bytesField(2, anyValue(part))
      ),
    ]);
  });
}

function spanBytes(span: Json): number[] {
  return [
    ...bytesField(1, hexBytes(String(get(span, "traceId")))),
    ...bytesField(2, hexBytes(String(get(span, "spanId")))),
    ...textField(5, String(get(span, "name"))),
    ...keyValues(9, items(span, "attributes")),
    ...items(span, "events").flatMap((event) =>
      bytesField(11, [
        ...textField(2, String(get(event, "name") ?? "")),
        ...keyValues(3, items(event, "attributes")),
      ])
    ),
    ...items(span, "links").flatMap((link) =>
      bytesField(13, [
        ...bytesField(1, hexBytes(String(get(link, "traceId")))),
        ...bytesField(2, hexBytes(String(get(link, "spanId")))),
        ...keyValues(4, items(link, "attributes")),
      ])
    ),
  ];
}

/** The protobuf encoding of an OTLP/JSON-shaped request. */
function protobuf(body: JsonObject): Uint8Array<ArrayBuffer> {
  const out = items(body, "resourceSpans").flatMap((resourceSpans) =>
    bytesField(1, [
      ...bytesField(
        1,
        keyValues(1, items(get(resourceSpans, "resource"), "attributes")),
      ),
      ...items(resourceSpans, "scopeSpans").flatMap((scopeSpans) => {
        const scope = get(scopeSpans, "scope");
        return bytesField(2, [
          ...bytesField(1, [
            ...textField(1, String(get(scope, "name") ?? "")),
            ...keyValues(3, items(scope, "attributes")),
          ]),
          ...items(scopeSpans, "spans").flatMap((span) =>
            bytesField(2, spanBytes(span))
          ),
        ]);
      }),
    ])
  );
  return Uint8Array.from(out);
}

/** Reads `google.rpc.Status.message` (field 2) from a protobuf answer. */
function statusMessage(bytes: Uint8Array): string {
  let pos = 0;
  const readVarint = () => {
    let value = 0;
    for (let shift = 0;; shift += 7) {
      const byte = bytes[pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  let message = "";
  while (pos < bytes.length) {
    const key = readVarint();
    if ((key & 7) === 0) readVarint();
    else {
      const length = readVarint();
      if (key >> 3 === 2) {
        message = new TextDecoder().decode(bytes.subarray(pos, pos + length));
      }
      pos += length;
    }
  }
  return message;
}

// ---- the receiver ----

type Api = ReturnType<typeof createOtlpApi>;

interface Answer {
  status: number;
  /** The refusal's message, or "" for a 200. */
  message: string;
}

async function send(
  app: Api,
  body: BodyInit,
  encoding: "json" | "protobuf",
): Promise<Answer> {
  const response = await app.request("/v1/traces", {
    method: "POST",
    headers: {
      "content-type": encoding === "json"
        ? "application/json"
        : "application/x-protobuf",
    },
    body,
  });
  if (response.status === 200) {
    await response.body?.cancel();
    return { status: 200, message: "" };
  }
  if (encoding === "json") {
    const status = await response.json();
    assert.equal(status.error.message, status.message);
    return { status: response.status, message: status.message };
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { status: response.status, message: statusMessage(bytes) };
}

/** Sends `body` as JSON and as protobuf; both answers must agree, and the one answer is returned. */
async function sendBoth(app: Api, body: JsonObject): Promise<Answer> {
  const json = await send(app, JSON.stringify(body), "json");
  const binary = await send(app, protobuf(body), "protobuf");
  assert.deepEqual(binary, json, "protobuf and JSON are answered alike");
  return json;
}

async function withApi(fn: (app: Api, db: TraceDb) => Promise<void>) {
  await withDb(async (db) => {
    await initializeObs(db);
    await fn(createOtlpApi({ db, now: () => NOW }), db);
  });
}

async function stored(
  db: TraceDb,
): Promise<{ application_id: string; meta: JsonObject }[]> {
  const result = await db.client.execute(
    "SELECT application_id, meta FROM obs_events ORDER BY seq",
  );
  return result.rows.map((row) => ({
    application_id: String(row.application_id),
    meta: JSON.parse(String(row.meta)),
  }));
}

/** Asserts a 400 in both encodings with exactly `message`, quoting none of `values`, and nothing stored. */
async function refused(
  app: Api,
  db: TraceDb,
  body: JsonObject,
  message: string,
  values: string[] = [],
): Promise<void> {
  const answer = await sendBoth(app, body);
  assert.deepEqual(answer, { status: 400, message: PREFIX + message });
  assert.ok(!answer.message.includes("\n"), "one line");
  for (const value of values) {
    assert.ok(!answer.message.includes(value), `${value} is not echoed`);
  }
  assert.deepEqual(await stored(db), []);
}

Deno.test("OTLP: a resource repeating tenant.id is refused in both encodings and nothing is stored", async () => {
  await withApi(async (app, db) => {
    await refused(
      app,
      db,
      request({
        resource: [str("tenant.id", "app-1"), str("tenant.id", "app-2")],
      }),
      `resourceSpans[0].resource.attributes: key "tenant.id" is repeated (items 1 and 2); ${UNIQUE}`,
      ["app-1", "app-2"],
    );
    // The same key in another list is no repeat: resource and span each hold one.
    const answer = await sendBoth(
      app,
      request({ span: [str("tenant.id", "app-1")] }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
    assert.deepEqual((await stored(db)).map((row) => row.application_id), [
      "app-1",
    ]);
  });
});

Deno.test("OTLP: a key repeated on a span, span event, link or scope is refused, naming the list", async () => {
  const twice = [str("app.k", "VALUE-1"), str("app.k", "VALUE-2")];
  const link = { traceId: TRACE_ID, spanId: "00f067aa0ba902b8" };
  const cases: [Parts, string][] = [
    [
      { span: twice },
      `${SPAN}.attributes: key "app.k" is repeated (items 1 and 2)`,
    ],
    [
      { events: [{ name: "e", attributes: twice }] },
      `${SPAN}.events[0].attributes: key "app.k" is repeated (items 0 and 1)`,
    ],
    [
      { links: [{ ...link, attributes: [] }, { ...link, attributes: twice }] },
      `${SPAN}.links[1].attributes: key "app.k" is repeated (items 0 and 1)`,
    ],
    [
      { scope: twice },
      `resourceSpans[0].scopeSpans[0].scope.attributes: key "app.k" is repeated (items 0 and 1)`,
    ],
  ];
  await withApi(async (app, db) => {
    for (const [parts, message] of cases) {
      await refused(app, db, request(parts), `${message}; ${UNIQUE}`, [
        "VALUE-1",
        "VALUE-2",
      ]);
    }
  });
});

Deno.test("OTLP: a key repeated inside a kvlistValue is refused at any depth", async () => {
  const map = (...values: Json[]) => ({ kvlistValue: { values } });
  await withApi(async (app, db) => {
    await refused(
      app,
      db,
      request({
        span: [
          kv(
            "app.map",
            map(str("a", "VALUE-X"), str("b", "y"), str("a", "VALUE-Z")),
          ),
        ],
      }),
      `${SPAN}.attributes[1].value.kvlistValue.values: key "a" is repeated (items 0 and 2); ${UNIQUE}`,
      ["VALUE-X", "VALUE-Z"],
    );
    await refused(
      app,
      db,
      request({
        resource: [
          str("tenant.id", "app-1"),
          kv("app.nested", {
            arrayValue: {
              values: [
                map(
                  kv(
                    "inner",
                    map(str("tenant.id", "p"), str("tenant.id", "q")),
                  ),
                ),
              ],
            },
          }),
        ],
      }),
      `resourceSpans[0].resource.attributes[2].value.arrayValue.values[0].kvlistValue.values[0].value.kvlistValue.values: key "tenant.id" is repeated (items 0 and 1); ${UNIQUE}`,
    );
    // Equal keys in different maps are no repeat.
    const answer = await sendBoth(
      app,
      request({
        span: [kv("app.maps", {
          arrayValue: { values: [map(str("a", "x")), map(str("a", "y"))] },
        })],
      }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
  });
});

Deno.test("OTLP: a tenant attribute that is not text is refused, never replaced by another rule's tenant", async () => {
  await withApi(async (app, db) => {
    const cases: [JsonObject, string][] = [
      [{ arrayValue: { values: [{ stringValue: "victim" }] } }, "a list"],
      [{ boolValue: true }, "a boolean"],
      [{ kvlistValue: { values: [] } }, "a map"],
    ];
    for (const [value, kind] of cases) {
      const answer = await sendBoth(
        app,
        request({ resource: [kv("tenant.id", value)] }),
      );
      assert.equal(answer.status, 400, kind);
      assert.equal(
        answer.message,
        `Cannot map OTLP span 0 (${SPAN}): its resource's tenant.id must be a string naming the application, not ${kind}; fix it and resend the batch`,
      );
    }
    assert.deepEqual(await stored(db), []);
  });
});

Deno.test("OTLP: values nested to the documented depth are taken, and deeper ones refused, in JSON as in protobuf", async () => {
  const nested = (levels: number): JsonObject => {
    let value: JsonObject = { stringValue: "leaf" };
    for (let i = 0; i < levels; i++) {
      value = { kvlistValue: { values: [kv("inner", value)] } };
    }
    return value;
  };
  await withApi(async (app) => {
    // kvlist levels the value limit allows, counted as the decoders count them.
    let deepest = 0;
    for (let levels = 10; levels <= 20; levels++) {
      const answer = await sendBoth(
        app,
        request({ span: [kv("app.deep", nested(levels))] }),
      );
      if (answer.status !== 200) {
        assert.equal(answer.status, 400);
        assert.match(answer.message, /nested deeper than 16 levels/);
        break;
      }
      deepest = levels;
    }
    assert.ok(deepest >= 14, `JSON took only ${deepest} nested levels`);
  });
});

Deno.test("OTLP: NaN and infinite doubleValues are kept by name, not refused and not dropped", async () => {
  await withApi(async (app, db) => {
    const answer = await sendBoth(
      app,
      request({
        span: [
          kv("app.nan", { doubleValue: "NaN" }),
          kv("app.inf", { doubleValue: "Infinity" }),
          kv("app.ninf", { doubleValue: "-Infinity" }),
          kv("app.d", { doubleValue: "2.5e-1" }),
          kv("app.list", {
            arrayValue: {
              values: [{ doubleValue: 1 }, { doubleValue: "NaN" }],
            },
          }),
        ],
      }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
    const [row] = await stored(db);
    const attributes = get(row?.meta, "attributes");
    assert.deepEqual(
      ["app.nan", "app.inf", "app.ninf", "app.d", "app.list"].map((key) =>
        get(attributes, key)
      ),
      // Lists of scalars are stored joined, as for every attribute.
      ["NaN", "Infinity", "-Infinity", 0.25, "1,NaN"],
    );
  });
});

Deno.test("OTLP: a count attribute holding no count is left out, and the span kept", async () => {
  await withApi(async (app, db) => {
    const answer = await sendBoth(
      app,
      request({
        span: [
          str("retrieval.top_k", "ten"),
          kv("budget.tokens", { intValue: "-5" }),
          kv("retrieval.documents.count", { doubleValue: 1.5 }),
          kv("http.response.status_code", { intValue: "200" }),
        ],
      }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
    const [row] = await stored(db);
    const attributes = get(row?.meta, "attributes");
    assert.deepEqual(
      [
        "retrieval.top_k",
        "budget.tokens",
        "retrieval.documents.count",
        "http.response.status_code",
      ].map((key) => get(attributes, key)),
      [undefined, undefined, undefined, 200],
    );
  });
});

Deno.test("OTLP: a doubleValue string that is no number is refused, not read as 0 or NaN", async () => {
  await withApi(async (app, db) => {
    for (const text of ["", "abc", "0x10"]) {
      const answer = await send(
        app,
        JSON.stringify(request({ span: [kv("app.d", { doubleValue: text })] })),
        "json",
      );
      assert.deepEqual(answer, {
        status: 400,
        message:
          `${PREFIX}${SPAN}.attributes[1].value.doubleValue: must be a number`,
      });
    }
    assert.deepEqual(await stored(db), []);
  });
});

Deno.test("OTLP: an intValue is an integer within int64 or refused; decimal strings are kept exactly", async () => {
  await withApi(async (app, db) => {
    for (
      const literal of [
        "1e300",
        // 2^63 as a JSON number, however written: one past int64's maximum.
        "9.223372036854775807e18",
        "9223372036854775808",
        "-9.3e18",
        '"9223372036854775808"',
        '"-9223372036854775809"',
      ]
    ) {
      const body = JSON.stringify(request({
        span: [kv("app.i", { intValue: 0 })],
      })).replace('"intValue":0', `"intValue":${literal}`);
      const answer = await send(app, body, "json");
      assert.deepEqual(answer, {
        status: 400,
        message:
          `${PREFIX}${SPAN}.attributes[1].value.intValue: must be a 64-bit integer (-9223372036854775808 to 9223372036854775807)`,
      }, literal);
    }
    assert.deepEqual(await stored(db), []);
    // Within int64, a decimal string (JSON) or an int64 (protobuf) is kept exactly.
    const answer = await sendBoth(
      app,
      request({
        span: [
          kv("app.max", { intValue: "9223372036854775807" }),
          kv("app.safe", { intValue: 9007199254740991 }),
        ],
      }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
    const [row] = await stored(db);
    const attributes = get(row?.meta, "attributes");
    assert.equal(get(attributes, "app.max"), "9223372036854775807");
    assert.equal(get(attributes, "app.safe"), 9007199254740991);
  });
});

Deno.test("OTLP: an intValue sent as a JSON number past 2^53 is kept as the producer's number", async () => {
  await withApi(async (app, db) => {
    const body = JSON.stringify(request({
      span: [kv("app.i", { intValue: 0 }), kv("app.min", { intValue: 1 })],
    })).replace('"intValue":1', '"intValue":-9223372036854775808')
      .replace('"intValue":0', '"intValue":1152921504606846976');
    // int64's minimum, -2^63, is a double exactly: the one bound a JSON number reaches.
    assert.deepEqual(await send(app, body, "json"), {
      status: 200,
      message: "",
    });
    const [row] = await stored(db);
    assert.equal(get(get(row?.meta, "attributes"), "app.i"), 2 ** 60);
    assert.equal(get(get(row?.meta, "attributes"), "app.min"), -(2 ** 63));
  });
});

Deno.test("OTLP: an AnyValue holding more than one value field is refused in both encodings, at any depth", async () => {
  await withApi(async (app, db) => {
    // JSON read stringValue first and filed this under "jS"; protobuf kept the last field, 7.
    await refused(
      app,
      db,
      request({
        resource: [kv("tenant.id", { stringValue: "jS", intValue: "7" })],
      }),
      `resourceSpans[0].resource.attributes[1].value: ${ONE_OF}`,
      ["jS"],
    );
    const cases: [Parts, string][] = [
      [
        {
          span: [kv("app.list", {
            arrayValue: {
              values: [{ intValue: 1 }, {
                boolValue: true,
                doubleValue: 1.5,
              }],
            },
          })],
        },
        `${SPAN}.attributes[1].value.arrayValue.values[1]`,
      ],
      [
        {
          span: [kv("app.map", {
            kvlistValue: {
              values: [kv("inner", {
                stringValue: "VALUE-S",
                kvlistValue: { values: [] },
              })],
            },
          })],
        },
        `${SPAN}.attributes[1].value.kvlistValue.values[0].value`,
      ],
      [
        {
          events: [{
            name: "e",
            attributes: [kv("app.b", {
              stringValue: "VALUE-S",
              bytesValue: "AQI=",
            })],
          }],
        },
        `${SPAN}.events[0].attributes[0].value`,
      ],
      [
        { scope: [kv("app.s", { arrayValue: {}, kvlistValue: {} })] },
        "resourceSpans[0].scopeSpans[0].scope.attributes[0].value",
      ],
    ];
    for (const [parts, field] of cases) {
      await refused(app, db, request(parts), `${field}: ${ONE_OF}`, [
        "VALUE-S",
      ]);
    }
    // One field, no field (null), and null beside one field are all accepted.
    const answer = await sendBoth(
      app,
      request({
        resource: [kv("tenant.id", { stringValue: "app-1", intValue: null })],
        span: [kv("app.none", {}), kv("app.one", { boolValue: false })],
      }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
    const [row] = await stored(db);
    assert.equal(row?.application_id, "app-1");
    assert.equal(get(get(row?.meta, "attributes"), "app.one"), false);
  });
});

Deno.test("OTLP: protobuf refuses a KeyValue whose value, sent in parts, holds two value fields", async () => {
  await withApi(async (app, db) => {
    // Protobuf merges the parts; a oneof decoder would keep the last field, 7.
    const body = request({
      resource: [kv("tenant.id", {
        $parts: [{ stringValue: "jS" }, { intValue: "7" }],
      })],
    });
    assert.deepEqual(await send(app, protobuf(body), "protobuf"), {
      status: 400,
      message:
        `${PREFIX}resourceSpans[0].resource.attributes[1].value: ${ONE_OF}`,
    });
    assert.deepEqual(await stored(db), []);
    // The same field in two parts merges as protobuf defines: the last wins.
    const merged = request({
      resource: [kv("tenant.id", {
        $parts: [{ stringValue: "app-1" }, { stringValue: "app-2" }],
      })],
    });
    assert.deepEqual(await send(app, protobuf(merged), "protobuf"), {
      status: 200,
      message: "",
    });
    assert.deepEqual((await stored(db)).map((row) => row.application_id), [
      "app-2",
    ]);
  });
});

Deno.test("OTLP: a NaN or infinite doubleValue is stored by name but is no tenant or id", async () => {
  // A resource tenant.id of NaN once became tenant "NaN", over the span's own.
  await withApi(async (app, db) => {
    const answer = await sendBoth(
      app,
      request({
        resource: [kv("tenant.id", { doubleValue: "NaN" })],
        span: [
          str("tenant.id", "app-span"),
          kv("gen_ai.conversation.id", { doubleValue: "Infinity" }),
          kv("gen_ai.data_source.id", { doubleValue: "NaN" }),
          kv("app.nan", { doubleValue: "NaN" }),
        ],
      }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
    const [row] = await stored(db);
    assert.equal(row?.application_id, "app-span");
    assert.equal(get(get(row?.meta, "attributes"), "app.nan"), "NaN");
    assert.deepEqual(items(row?.meta, "resources"), []);
    const threads = await db.client.execute(
      "SELECT thread_id FROM obs_events",
    );
    assert.deepEqual(threads.rows.map((r) => r.thread_id), [null]);
  });
  // With no other tenant, the next fallback decides (here service.name).
  await withApi(async (app, db) => {
    const answer = await sendBoth(
      app,
      request({
        resource: [
          kv("tenant.id", { doubleValue: "-Infinity" }),
          kv("application.id", { doubleValue: "NaN" }),
        ],
      }),
    );
    assert.deepEqual(answer, { status: 200, message: "" });
    assert.deepEqual((await stored(db)).map((row) => row.application_id), [
      "svc",
    ]);
  });
});

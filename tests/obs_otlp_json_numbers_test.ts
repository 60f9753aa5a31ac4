import assert from "node:assert/strict";
import { initializeObs } from "../lib/obs/mod.ts";
import { decodeOtlpTraces } from "../lib/obs/otlp/mod.ts";
import { createOtlpApi } from "../routes/otlp.ts";
import { withDb } from "./_helpers.ts";

/**
 * An OTLP/JSON request of spans whose fields are written as given, so
 * numbers reach the decoder as literal text (JSON.stringify cannot write
 * an integer past 2^53 without rounding it first).
 */
function requestText(spans: string[]): string {
  return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"bot"}}]},"scopeSpans":[{"spans":[${
    spans.join(",")
  }]}]}]}`;
}

function spanText(n: number, fields: string): string {
  const spanId = (n + 1).toString(16).padStart(16, "0");
  return `{"traceId":"${
    "01".repeat(16)
  }","spanId":"${spanId}","name":"s",${fields}}`;
}

function decode(text: string) {
  return decodeOtlpTraces(new TextEncoder().encode(text), "json");
}

function decodeError(text: string): string {
  try {
    decode(text);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail("the request was accepted");
}

Deno.test("decodeOtlpTraces() keeps every digit of times sent as JSON numbers", () => {
  // A double near 1.7e18 holds multiples of 256 only: each of these would
  // round, and the two starts would become one time.
  const [a, b] = decode(requestText([
    spanText(
      0,
      '"startTimeUnixNano":1700000000123456789,"endTimeUnixNano":1700000000123999999,' +
        '"events":[{"name":"e","timeUnixNano":1700000000123456895}]',
    ),
    spanText(1, '"startTimeUnixNano":1700000000123456800'),
  ]));
  assert.equal(a?.startTimeUnixNano, 1700000000123456789n);
  assert.equal(a?.endTimeUnixNano, 1700000000123999999n);
  assert.equal(a?.events[0]?.timeUnixNano, 1700000000123456895n);
  assert.equal(b?.startTimeUnixNano, 1700000000123456800n);
  // The whole unsigned 64-bit range, to its last value, which a double cannot hold.
  const [last] = decode(
    requestText([spanText(0, '"startTimeUnixNano":18446744073709551615')]),
  );
  assert.equal(last?.startTimeUnixNano, 2n ** 64n - 1n);
});

Deno.test("decodeOtlpTraces() refuses a numeric time outside the unsigned 64-bit range", () => {
  for (const time of ["18446744073709551616", "-9007199254740993", "-1"]) {
    assert.match(
      decodeError(requestText([spanText(0, `"startTimeUnixNano":${time}`)])),
      /spans\[0\]\.startTimeUnixNano: must be from 0 to 18446744073709551615 \(an unsigned 64-bit integer\)$/,
      time,
    );
  }
});

Deno.test("decodeOtlpTraces() reads a time with a fraction or an exponent as a double, as before", () => {
  // A fraction a double keeps is no integer: refused.
  assert.match(
    decodeError(requestText([spanText(0, '"startTimeUnixNano":1.5')])),
    /spans\[0\]\.startTimeUnixNano: must be /,
  );
  // Past 2^53 a double has no fraction left: read as the double, rounded.
  const [fraction, exponent] = decode(requestText([
    spanText(0, '"startTimeUnixNano":1700000000123456789.4'),
    spanText(1, '"startTimeUnixNano":1.7000000001234568e18'),
  ]));
  assert.equal(fraction?.startTimeUnixNano, 1700000000123456768n);
  assert.equal(exponent?.startTimeUnixNano, 1700000000123456768n);
});

Deno.test("decodeOtlpTraces() reads other numbers past 2^53 as before", () => {
  const [span] = decode(requestText([spanText(
    0,
    '"attributes":[{"key":"i","value":{"intValue":9007199254740993}},' +
      '{"key":"d","value":{"doubleValue":9007199254740993}}],' +
      '"droppedAttributesCount":99999999999999999999',
  )]));
  // A JSON number is an attribute's number, as the producer's double was.
  assert.equal(span?.attributes.get("i"), 9007199254740992);
  assert.equal(span?.attributes.get("d"), 9007199254740992);
  assert.match(
    decodeError(requestText([spanText(0, '"kind":99999999999999999999')])),
    /spans\[0\]\.kind: must be one of SPAN_KIND_UNSPECIFIED, .* \(or an integer from 0 to 5\)$/,
  );
  assert.match(
    decodeError(requestText([spanText(
      0,
      '"attributes":[{"key":"i","value":{"intValue":9223372036854775807}}]',
    )])),
    /attributes\[0\]\.value\.intValue: must be a 64-bit integer/,
  );
});

Deno.test("createOtlpApi() stores the millisecond of a numeric time sent past 2^53", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createOtlpApi({ db });
    // 1700000000123999999 rounds to ...124000000, a millisecond later.
    const response = await app.request("/v1/traces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: requestText([spanText(
        0,
        '"startTimeUnixNano":1700000000123999999,"endTimeUnixNano":1700000000999999999',
      )]),
    });
    assert.equal(response.status, 200, await response.clone().text());
    await response.body?.cancel();
    const { rows } = await db.client.execute(
      "SELECT started_at, ended_at FROM obs_events", // epoch milliseconds
    );
    assert.deepEqual(
      rows.map((row) => [row.started_at, row.ended_at]),
      [[1700000000123, 1700000000999]],
    );
  });
});

/** A protobuf field: its key, then a varint or length-delimited payload. */
function protoField(field: number, payload: number | Uint8Array): number[] {
  if (typeof payload === "number") {
    return [field << 3, ...varint(BigInt.asUintN(64, BigInt(payload)))];
  }
  return [(field << 3) | 2, ...varint(BigInt(payload.length)), ...payload];
}

function varint(value: bigint): number[] {
  const bytes: number[] = [];
  do {
    const low = Number(value & 0x7fn);
    value >>= 7n;
    bytes.push(value > 0n ? low | 0x80 : low);
  } while (value > 0n);
  return bytes;
}

/** A protobuf request of one span with valid ids and the `fields` given (already encoded). */
function protobufRequest(fields: number[]): Uint8Array {
  const span = new Uint8Array([
    ...protoField(1, new Uint8Array(16).fill(1)),
    ...protoField(2, new Uint8Array(8).fill(2)),
    ...fields,
  ]);
  const scopeSpans = new Uint8Array(protoField(2, span));
  const resourceSpans = new Uint8Array(protoField(2, scopeSpans));
  return new Uint8Array(protoField(1, resourceSpans));
}

Deno.test("decodeOtlpTraces() refuses an enum that is no name or integer in its range, in words, in JSON and protobuf alike", () => {
  const kinds =
    "must be one of SPAN_KIND_UNSPECIFIED, SPAN_KIND_INTERNAL, SPAN_KIND_SERVER, SPAN_KIND_CLIENT, SPAN_KIND_PRODUCER, SPAN_KIND_CONSUMER (or an integer from 0 to 5)";
  const codes =
    "must be one of STATUS_CODE_UNSET, STATUS_CODE_OK, STATUS_CODE_ERROR (or an integer from 0 to 2)";
  const at = "Cannot decode the OTLP trace request: " +
    "resourceSpans[0].scopeSpans[0].spans[0]";
  for (
    const [fields, message] of [
      ['"kind":1.5', `${at}.kind: ${kinds}`],
      ['"kind":1e300', `${at}.kind: ${kinds}`],
      ['"kind":6', `${at}.kind: ${kinds}`],
      ['"kind":-1', `${at}.kind: ${kinds}`],
      ['"kind":"SPAN_KIND_OTHER"', `${at}.kind: ${kinds}`],
      ['"kind":true', `${at}.kind: ${kinds}`],
      ['"kind":{}', `${at}.kind: ${kinds}`],
      ['"status":{"code":2.5}', `${at}.status.code: ${codes}`],
      ['"status":{"code":3}', `${at}.status.code: ${codes}`],
      ['"status":{"code":[1]}', `${at}.status.code: ${codes}`],
    ] as const
  ) {
    assert.equal(decodeError(requestText([spanText(0, fields)])), message);
  }
  // Protobuf carries only integers; one out of range is named the same way.
  for (
    const [fields, message] of [
      [protoField(6, 7), `${at}.kind: ${kinds}`],
      [protoField(6, -1), `${at}.kind: ${kinds}`],
      [
        protoField(15, new Uint8Array(protoField(3, 3))),
        `${at}.status.code: ${codes}`,
      ],
    ] as const
  ) {
    assert.throws(
      () => decodeOtlpTraces(protobufRequest(fields), "protobuf"),
      (error: Error) => error.message === message,
      message,
    );
  }
  // Whole numbers in range and names are taken, as before.
  const [span] = decode(
    requestText([
      spanText(0, '"kind":2.0,"status":{"code":"STATUS_CODE_ERROR"}'),
    ]),
  );
  assert.equal(span?.kind, 2);
  assert.equal(span?.statusCode, 2);
  const [proto] = decodeOtlpTraces(
    protobufRequest([
      ...protoField(6, 3),
      ...protoField(15, new Uint8Array(protoField(3, 1))),
    ]),
    "protobuf",
  );
  assert.equal(proto?.kind, 3);
  assert.equal(proto?.statusCode, 1);
});

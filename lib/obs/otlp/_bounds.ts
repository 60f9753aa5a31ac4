/**
 * Bounds on what one OTLP trace request may hold, checked before the request
 * is turned into objects, so a small body that describes millions of spans,
 * attributes or events is refused (413) having built nothing.
 *
 * Protobuf: protobufjs decodes a whole message tree in one call and offers
 * no hook to stop it part-way, and a bounded decoder would mean forking its
 * generated code. So a pre-scan walks the wire format first: tags and
 * lengths only, no allocation, one pass over the bytes. It descends into
 * exactly the fields protobufjs materialises (the length-delimited message
 * fields of `_proto.ts`) and skips every other field by its wire type, as
 * the decoder does; it counts as it goes and throws at the first count past
 * its limit. Anything it cannot walk (a length past its message, a bad wire
 * type, a group, which OTLP never uses) is refused as malformed, so the
 * decoder never sees bytes the scan did not count.
 *
 * JSON: the strict parser stops at a value budget while parsing (see
 * `decode.ts`); the same counts are then checked on the parsed tree, before
 * validation copies it.
 *
 * @module
 */

import { BatchTooLargeError, MAX_BATCH_EVENTS } from "../batch.ts";
import { OtlpRequestError } from "./error.ts";

/** What one OTLP trace request may hold. */
export const OTLP_LIMITS = {
  /** `ResourceSpans` in the request. */
  resourceSpans: 1_000,
  /** `ScopeSpans` in the request, over all resources. */
  scopeSpans: 10_000,
  /** Spans in the request (the batch bound). */
  spans: MAX_BATCH_EVENTS,
  /** Attributes of one resource, scope, span, span event or link (the OpenTelemetry SDK default). */
  attributes: 128,
  /** Events of one span (the OpenTelemetry SDK default). */
  eventsPerSpan: 128,
  /** Links of one span (the OpenTelemetry SDK default). */
  linksPerSpan: 128,
  /** Attribute values in the whole request: every key-value and every array or kvlist item, at any depth. */
  values: 200_000,
  /** Deepest nesting of array and kvlist values. */
  valueDepth: 16,
} as const;

type Total = "resourceSpans" | "scopeSpans" | "spans" | "values";

const TOTAL_NAMES: Record<Total, string> = {
  resourceSpans: "resource spans (ResourceSpans)",
  scopeSpans: "scope spans (ScopeSpans)",
  spans: "spans",
  values: "attribute values in all (nested array and kvlist items count)",
};

/** Request-wide counts, each refused past its limit. */
class Totals {
  #counts: Record<Total, number> = {
    resourceSpans: 0,
    scopeSpans: 0,
    spans: 0,
    values: 0,
  };

  add(total: Total, n = 1): void {
    this.#counts[total] += n;
    if (this.#counts[total] > OTLP_LIMITS[total]) {
      throw tooMany(OTLP_LIMITS[total], TOTAL_NAMES[total]);
    }
  }
}

/**
 * Refuses a count of `n` things of one owner past `limit`: smaller batches
 * would not help, the owner must carry fewer (as the SDKs' own limits do).
 */
function perOwner(n: number, limit: number, what: string): void {
  if (n > limit) {
    throw tooMany(
      limit,
      what,
      "record fewer (the OpenTelemetry SDKs drop the rest at this limit)",
    );
  }
}

function tooMany(
  limit: number,
  what: string,
  remedy = "send smaller batches",
): BatchTooLargeError {
  return new BatchTooLargeError(
    `Cannot decode the OTLP trace request: more than ${limit} ${what}; ${remedy}`,
    limit,
  );
}

function malformed(detail: string): OtlpRequestError {
  return new OtlpRequestError(
    `Cannot decode the OTLP trace request: body is not a protobuf message (${detail})`,
  );
}

function tooDeep(): OtlpRequestError {
  return new OtlpRequestError(
    `Cannot decode the OTLP trace request: values are nested deeper than ${OTLP_LIMITS.valueDepth} levels`,
  );
}

// ---- protobuf ----

/**
 * Calls `onMessage(field, start, end)` for each length-delimited field of
 * the message in `[start, end)`; throws for wire data it cannot walk.
 */
export function eachField(
  bytes: Uint8Array,
  start: number,
  end: number,
  onMessage: (field: number, start: number, end: number) => void,
): void {
  let pos = start;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (pos >= end) throw malformed("truncated varint");
      const byte = bytes[pos++]!;
      value += (byte & 127) * 2 ** shift;
      if (byte < 128) return value;
    }
    throw malformed("varint longer than 10 bytes");
  };
  while (pos < end) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 0) throw malformed("field number 0");
    if (wire === 0) varint();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const length = varint();
      if (length > end - pos) throw malformed("a length runs past its message");
      onMessage(field, pos, pos + length);
      pos += length;
    } else if (wire === 3 || wire === 4) {
      throw malformed("groups are not part of OTLP");
    } else throw malformed(`wire type ${wire}`);
    if (pos > end) throw malformed("a field runs past its message");
  }
}

/** Checks an `ExportTraceServiceRequest` in the protobuf encoding against {@link OTLP_LIMITS}. */
export function checkProtobufBounds(bytes: Uint8Array): void {
  const totals = new Totals();
  eachField(bytes, 0, bytes.length, (field, start, end) => {
    if (field !== 1) return;
    totals.add("resourceSpans");
    scanResourceSpans(bytes, start, end, totals);
  });
}

function scanResourceSpans(
  bytes: Uint8Array,
  start: number,
  end: number,
  totals: Totals,
): void {
  eachField(bytes, start, end, (field, s, e) => {
    if (field === 1) scanAttributesOf(bytes, s, e, 1, "resource", totals);
    else if (field === 2) {
      totals.add("scopeSpans");
      scanScopeSpans(bytes, s, e, totals);
    }
  });
}

function scanScopeSpans(
  bytes: Uint8Array,
  start: number,
  end: number,
  totals: Totals,
): void {
  eachField(bytes, start, end, (field, s, e) => {
    if (field === 1) scanAttributesOf(bytes, s, e, 3, "scope", totals);
    else if (field === 2) {
      totals.add("spans");
      scanSpan(bytes, s, e, totals);
    }
  });
}

function scanSpan(
  bytes: Uint8Array,
  start: number,
  end: number,
  totals: Totals,
): void {
  let attributes = 0;
  let events = 0;
  let links = 0;
  eachField(bytes, start, end, (field, s, e) => {
    if (field === 9) {
      perOwner(++attributes, OTLP_LIMITS.attributes, "attributes on one span");
      scanKeyValue(bytes, s, e, 0, totals);
    } else if (field === 11) {
      perOwner(++events, OTLP_LIMITS.eventsPerSpan, "events on one span");
      scanAttributesOf(bytes, s, e, 3, "span event", totals);
    } else if (field === 13) {
      // Only a link's attributes are decoded (to be checked, not kept).
      perOwner(++links, OTLP_LIMITS.linksPerSpan, "links on one span");
      scanAttributesOf(bytes, s, e, 4, "link", totals);
    }
  });
}

/** Counts the attributes (field `attributesField`) of one resource, scope, span event or link. */
function scanAttributesOf(
  bytes: Uint8Array,
  start: number,
  end: number,
  attributesField: number,
  owner: string,
  totals: Totals,
): void {
  let attributes = 0;
  eachField(bytes, start, end, (field, s, e) => {
    if (field !== attributesField) return;
    perOwner(
      ++attributes,
      OTLP_LIMITS.attributes,
      `attributes on one ${owner}`,
    );
    scanKeyValue(bytes, s, e, 0, totals);
  });
}

/** A `KeyValue`: one value, whose `AnyValue` may nest arrays and kvlists. */
function scanKeyValue(
  bytes: Uint8Array,
  start: number,
  end: number,
  depth: number,
  totals: Totals,
): void {
  totals.add("values");
  eachField(bytes, start, end, (field, s, e) => {
    if (field === 2) scanAnyValue(bytes, s, e, depth, totals);
  });
}

function scanAnyValue(
  bytes: Uint8Array,
  start: number,
  end: number,
  depth: number,
  totals: Totals,
): void {
  eachField(bytes, start, end, (field, s, e) => {
    if (field !== 5 && field !== 6) return;
    if (depth + 1 > OTLP_LIMITS.valueDepth) throw tooDeep();
    // ArrayValue.values (AnyValue) or KeyValueList.values (KeyValue), both field 1.
    eachField(bytes, s, e, (item, is, ie) => {
      if (item !== 1) return;
      if (field === 5) {
        totals.add("values");
        scanAnyValue(bytes, is, ie, depth + 1, totals);
      } else scanKeyValue(bytes, is, ie, depth + 1, totals);
    });
  });
}

// ---- JSON ----

/** Checks a parsed OTLP/JSON request against {@link OTLP_LIMITS}; shapes it does not expect are left to validation. */
export function checkJsonBounds(request: unknown): void {
  const totals = new Totals();
  for (const resourceSpans of itemsOf(request, "resourceSpans")) {
    totals.add("resourceSpans");
    jsonAttributes(fieldOf(resourceSpans, "resource"), "resource", totals);
    for (const scopeSpans of itemsOf(resourceSpans, "scopeSpans")) {
      totals.add("scopeSpans");
      jsonAttributes(fieldOf(scopeSpans, "scope"), "scope", totals);
      const spans = itemsOf(scopeSpans, "spans");
      totals.add("spans", spans.length);
      for (const span of spans) jsonSpan(span, totals);
    }
  }
}

function jsonSpan(span: unknown, totals: Totals): void {
  jsonAttributes(span, "span", totals);
  const events = itemsOf(span, "events");
  perOwner(events.length, OTLP_LIMITS.eventsPerSpan, "events on one span");
  for (const event of events) jsonAttributes(event, "span event", totals);
  const links = itemsOf(span, "links");
  perOwner(links.length, OTLP_LIMITS.linksPerSpan, "links on one span");
  for (const link of links) jsonAttributes(link, "link", totals);
}

function jsonAttributes(owner: unknown, name: string, totals: Totals): void {
  const attributes = itemsOf(owner, "attributes");
  perOwner(
    attributes.length,
    OTLP_LIMITS.attributes,
    `attributes on one ${name}`,
  );
  for (const keyValue of attributes) {
    totals.add("values");
    jsonValue(fieldOf(keyValue, "value"), 0, totals);
  }
}

function jsonValue(value: unknown, depth: number, totals: Totals): void {
  const array = fieldOf(value, "arrayValue");
  const kvlist = fieldOf(value, "kvlistValue");
  if (array === undefined && kvlist === undefined) return;
  if (depth + 1 > OTLP_LIMITS.valueDepth) throw tooDeep();
  for (const item of itemsOf(array, "values")) {
    totals.add("values");
    jsonValue(item, depth + 1, totals);
  }
  for (const keyValue of itemsOf(kvlist, "values")) {
    totals.add("values");
    jsonValue(fieldOf(keyValue, "value"), depth + 1, totals);
  }
}

function fieldOf(value: unknown, key: string): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return undefined;
  }
  return Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function itemsOf(value: unknown, key: string): readonly unknown[] {
  const items = fieldOf(value, key);
  return Array.isArray(items) ? items : [];
}

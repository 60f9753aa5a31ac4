/**
 * Decodes an OTLP/HTTP `ExportTraceServiceRequest` body, in either the JSON or
 * the binary protobuf encoding, into one flat list of normalised spans. The
 * protobuf encoding is decoded by protobufjs against the protocol definitions
 * in `_proto.ts`; both encodings then pass through the same valibot
 * schema, so a field means the same thing whichever way it arrived.
 *
 * JSON follows the OTLP/JSON rules: lowerCamelCase keys, hex trace and span
 * ids, 64-bit integers as strings or numbers, enums as integers (their names
 * are accepted too), bytes as base64, unknown fields ignored. It is parsed
 * strictly (duplicate keys are refused). A time sent as an integer literal
 * keeps every digit, as a string does: `JSON.parse` would round one past
 * 2^53 by up to a few hundred nanoseconds, which can merge or move a
 * millisecond. Every other number (an `intValue` included, see `toInt`),
 * and a time written with a fraction or an exponent, is read as the double
 * `JSON.parse` makes of it, as the producer's own double was.
 *
 * Every attribute list (resource, scope, span, span event, link and
 * `kvlistValue`) is checked the same way in both encodings, and a request
 * breaking the OTLP data model is refused rather than guessed at: a key
 * repeated within one list (keeping either value would be a guess, and for
 * `tenant.id` a guess at the tenant), an `AnyValue` holding more than one of
 * its value fields (JSON would read one, a protobuf oneof decoder the other;
 * see `_proto.ts`), or an `intValue` that is no integer within int64. A
 * `doubleValue` that is NaN or infinite, which an SDK may well send, is
 * accepted rather than refusing the producer's whole request: it is decoded
 * as that number (see {@link OtlpValue}), and the mapping stores it by name
 * (`"NaN"`, `"Infinity"`, `"-Infinity"`), as JSON cannot hold it as a number.
 * Scope and link attributes are checked, not kept.
 *
 * Both encodings are bounded before anything past a bound is built (see
 * `_bounds.ts` for how, and {@link OTLP_LIMITS} for the numbers): a request
 * past a bound is refused with {@link BatchTooLargeError} (413).
 *
 * @module
 */

import * as v from "valibot";
import { issueParts } from "../../issues.ts";
import {
  jsonBudget,
  parseStrictJson,
  StrictJsonError,
} from "../../json/strict_json.ts";
import { BatchTooLargeError, MAX_BATCH_JSON_VALUES } from "../batch.ts";
import {
  checkJsonBounds,
  checkProtobufBounds,
  OTLP_LIMITS,
} from "./_bounds.ts";
import { OtlpRequestError } from "./error.ts";
import { jsonName, otlpProtoTypes } from "./_proto.ts";
import { invalidUtf8Field } from "./_proto_utf8.ts";
import { ProblemList } from "./_refusals.ts";

export { OTLP_LIMITS };

/** The two OTLP/HTTP body encodings. */
export const OTLP_ENCODINGS = ["json", "protobuf"] as const;
/** One of {@link OTLP_ENCODINGS}. */
export type OtlpEncoding = typeof OTLP_ENCODINGS[number];

/**
 * An attribute value after decoding (64-bit integers beyond 2^53 stay
 * decimal strings). A `doubleValue` that is NaN or infinite stays that
 * number, never its name: a string is what the producer wrote, while a
 * non-finite double is no text, so whatever reads an id or a tenant from an
 * attribute (which take finite numbers as text) leaves it out, and only the
 * stored attributes and preview write it by name. Decoding it to the string
 * `"NaN"` would make a `tenant.id` of NaN the tenant "NaN".
 */
export type OtlpValue =
  | string
  | number
  | boolean
  | null
  | Uint8Array
  | OtlpValue[]
  | { [key: string]: OtlpValue };

/**
 * A value as the text of an id, a tenant or a name: a string, or a finite
 * number's digits; `null` for anything else, a NaN or infinite double
 * included (see {@link OtlpValue}).
 */
export function scalarText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) {
    return String(value);
  }
  return null;
}

/** Attributes by key, in the order they were sent. */
export type OtlpAttributes = ReadonlyMap<string, OtlpValue>;

/** A span event (name, time and attributes). */
export interface OtlpSpanEvent {
  name: string;
  timeUnixNano: bigint;
  attributes: OtlpAttributes;
}

/** One span with its resource and scope, in one shape for both encodings. */
export interface OtlpSpan {
  /** Position in the request, counted across all resources and scopes. */
  index: number;
  /** Where the span sits in the request, e.g. `resourceSpans[0].scopeSpans[1].spans[2]`. */
  path: string;
  /** 32 lower-case hex digits. */
  traceId: string;
  /** 16 lower-case hex digits. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** `SpanKind` number (0 unspecified … 5 consumer). */
  kind: number;
  /** Epoch nanoseconds; 0 when unset. */
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: OtlpAttributes;
  events: OtlpSpanEvent[];
  /** `StatusCode` number: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  resource: OtlpAttributes;
  scope: { name: string; version: string };
}

/** Deepest nesting of array and kvlist attribute values accepted. */
const MAX_VALUE_DEPTH = OTLP_LIMITS.valueDepth;

/**
 * JSON nesting an OTLP request may reach: each level of a nested value
 * takes up to four JSON levels (`kvlistValue`, `values`, the entry, its
 * `value`), and the request around a span's attributes a dozen more, so the
 * value limit is the one a request meets, as it is in protobuf.
 */
const MAX_OTLP_JSON_DEPTH = 4 * (MAX_VALUE_DEPTH + 1) + 16;

// The wire shape both encodings are brought to before validation; as
// parsed, a JSON number may still be a `bigint` (`Big`), read as a double
// by validation.
interface WireAnyValue<Big = never> {
  stringValue?: string | null | undefined;
  boolValue?: boolean | null | undefined;
  intValue?: string | number | Big | null | undefined;
  doubleValue?: string | number | Big | null | undefined;
  arrayValue?:
    | { values?: WireAnyValue<Big>[] | null | undefined }
    | null
    | undefined;
  kvlistValue?:
    | { values?: WireKeyValue<Big>[] | null | undefined }
    | null
    | undefined;
  bytesValue?: string | Uint8Array | null | undefined;
}
interface WireKeyValue<Big = never> {
  key: string;
  value?: WireAnyValue<Big> | null | undefined;
}

const Bytes = v.union(
  [v.string(), v.instance(Uint8Array)],
  "must be a hex or base64 string",
);
/**
 * An integer literal past 2^53, which the parser keeps as a `bigint`, read
 * as the double `JSON.parse` makes of it: only times take it exactly.
 */
const AsDouble = v.pipe(v.bigint(), v.transform(Number));
const Int64 = v.union([
  v.pipe(v.string(), v.regex(/^-?\d{1,20}$/, "must be a decimal integer")),
  v.pipe(v.number(), v.integer("must be an integer")),
  AsDouble,
], "must be an integer or a decimal integer string");
const UINT64_MAX = 2n ** 64n - 1n;
const inUint64 = (text: string) =>
  !text.startsWith("-") && text.length <= 64 && BigInt(text) <= UINT64_MAX;
const UINT64_RANGE =
  `must be from 0 to ${UINT64_MAX} (an unsigned 64-bit integer)`;
const Uint64 = v.union([
  v.pipe(
    v.string(),
    v.regex(/^-?\d+$/, "must be a decimal integer"),
    // Checked only once the text is an integer (the pipe runs on after the regex).
    v.check((text) => !/^-?\d+$/.test(text) || inUint64(text), UINT64_RANGE),
  ),
  v.pipe(
    v.number(),
    v.integer("must be an integer"),
    v.minValue(0, UINT64_RANGE),
    // 2 ** 64 is the first double past the range (no double equals its end).
    v.check((n) => n < 2 ** 64, UINT64_RANGE),
  ),
  // An integer literal past 2^53, every digit kept (see parseJson).
  v.pipe(
    v.bigint(),
    v.minValue(0n, UINT64_RANGE),
    v.maxValue(UINT64_MAX, UINT64_RANGE),
  ),
], "must be a non-negative integer or decimal integer string");
const SPAN_KINDS = [
  "SPAN_KIND_UNSPECIFIED",
  "SPAN_KIND_INTERNAL",
  "SPAN_KIND_SERVER",
  "SPAN_KIND_CLIENT",
  "SPAN_KIND_PRODUCER",
  "SPAN_KIND_CONSUMER",
] as const;
const STATUS_CODES = [
  "STATUS_CODE_UNSET",
  "STATUS_CODE_OK",
  "STATUS_CODE_ERROR",
] as const;
/**
 * The one refusal of an enum field, whatever was wrong (a type, a name, a
 * fraction, a number out of range): protobuf can send only the last, and
 * is answered in the same words.
 */
function enumRule(names: readonly string[]): string {
  return `must be one of ${names.join(", ")} (or an integer from 0 to ${
    names.length - 1
  })`;
}
/** An enum as sent; which name or number it is, is checked with its path later ({@link enumNumber}). */
function enumOf(names: readonly string[]) {
  return v.union([v.number(), v.string(), AsDouble], enumRule(names));
}
const list = <T extends v.GenericSchema>(item: T) =>
  v.nullish(v.array(item, "must be an array"));
/**
 * An object schema's message: valibot reports a missing field as an issue
 * of the object, which must say the field is required, not that the
 * object is something else.
 */
const objectMessage = (what: string) => (issue: v.BaseIssue<unknown>) =>
  issue.received === "undefined" ? "is required" : `must be ${what}`;

// Typed by hand: the two schemas refer to each other.
type AnyValueSchemaType = v.GenericSchema<WireAnyValue<bigint>, WireAnyValue>;
type KeyValueSchemaType = v.GenericSchema<WireKeyValue<bigint>, WireKeyValue>;

const AnyValueSchema: AnyValueSchemaType = v.lazy(() =>
  v.object({
    stringValue: v.nullish(v.string("must be a string")),
    boolValue: v.nullish(v.boolean("must be a boolean")),
    intValue: v.nullish(Int64),
    // Any number, NaN included (protobuf carries it); a string is checked with its path later.
    doubleValue: v.nullish(
      v.union([
        v.custom<number | string>(
          (value) => typeof value === "number" || typeof value === "string",
        ),
        AsDouble,
      ], "must be a number or a decimal string"),
    ),
    arrayValue: v.nullish(
      v.object(
        { values: list(AnyValueSchema) },
        objectMessage("an ArrayValue object"),
      ),
    ),
    kvlistValue: v.nullish(
      v.object(
        { values: list(KeyValueSchema) },
        objectMessage("a KeyValueList object"),
      ),
    ),
    bytesValue: v.nullish(Bytes),
  }, objectMessage("an AnyValue object"))
);
const KeyValueSchema: KeyValueSchemaType = v.object({
  key: v.string("must be a string"),
  value: v.nullish(AnyValueSchema),
}, objectMessage("a {key, value} object"));
const Attributes = list(KeyValueSchema);

const LinkSchema = v.object(
  { attributes: Attributes },
  objectMessage("a link object"),
);

const SpanSchema = v.object({
  traceId: Bytes,
  spanId: Bytes,
  parentSpanId: v.nullish(Bytes),
  name: v.nullish(v.string("must be a string")),
  kind: v.nullish(enumOf(SPAN_KINDS)),
  startTimeUnixNano: v.nullish(Uint64),
  endTimeUnixNano: v.nullish(Uint64),
  attributes: Attributes,
  events: list(v.object({
    timeUnixNano: v.nullish(Uint64),
    name: v.nullish(v.string("must be a string")),
    attributes: Attributes,
  }, objectMessage("a span event object"))),
  links: list(LinkSchema),
  status: v.nullish(v.object({
    message: v.nullish(v.string("must be a string")),
    code: v.nullish(enumOf(STATUS_CODES)),
  }, objectMessage("a Status object"))),
}, objectMessage("a span object"));

const RequestSchema = v.object({
  resourceSpans: list(v.object({
    resource: v.nullish(
      v.object({ attributes: Attributes }, objectMessage("a Resource object")),
    ),
    scopeSpans: list(v.object({
      scope: v.nullish(v.object({
        name: v.nullish(v.string("must be a string")),
        version: v.nullish(v.string("must be a string")),
        attributes: Attributes,
      }, objectMessage("an InstrumentationScope object"))),
      // Each span is checked where it is flattened, with the checks the
      // schema cannot make, so one refusal names the problems of several
      // spans whichever check finds them.
      spans: list(v.unknown()),
    }, objectMessage("a ScopeSpans object"))),
  }, objectMessage("a ResourceSpans object"))),
}, objectMessage("an ExportTraceServiceRequest object"));
type WireRequest = v.InferOutput<typeof RequestSchema>;
type WireSpan = v.InferOutput<typeof SpanSchema>;

/** Decodes an `ExportTraceServiceRequest` body; throws {@link OtlpRequestError} when it cannot. */
export function decodeOtlpTraces(
  body: Uint8Array,
  encoding: OtlpEncoding,
): OtlpSpan[] {
  try {
    const wire = encoding === "json" ? parseJson(body) : parseProtobuf(body);
    const parsed = v.safeParse(RequestSchema, wire);
    if (!parsed.success) throw schemaRefusal(parsed.issues);
    return flatten(parsed.output);
  } catch (error) {
    // Pathologically deep nesting exhausts the stack before any bound is checked.
    if (error instanceof RangeError) {
      throw refusal("values are nested too deeply", error);
    }
    throw error;
  }
}

/** A refusal of the decoder's own checks; `detail` names the field and the rule. */
class DecodeRefusal extends OtlpRequestError {
  readonly detail: string;

  constructor(detail: string, options?: ErrorOptions) {
    super(`Cannot decode the OTLP trace request: ${detail}`, options);
    this.detail = detail;
  }
}

function refusal(detail: string, cause?: unknown): DecodeRefusal {
  return new DecodeRefusal(
    detail,
    cause === undefined ? undefined : { cause },
  );
}

/** The schema's issues, the first of each field outside spans named. */
function schemaRefusal(issues: readonly v.BaseIssue<unknown>[]): DecodeRefusal {
  const problems = new ProblemList();
  for (const issue of issues) {
    const { field, message } = issueParts(issue, "indexed");
    problems.add(field, `${field}: ${message}`);
  }
  return refusal(problems.size > 0 ? problems.describe() : "invalid value");
}

/** `span` checked against the span schema; refused with its first issue, named from `path` on. */
function wireSpan(span: unknown, path: string): WireSpan {
  const parsed = v.safeParse(SpanSchema, span);
  if (parsed.success) return parsed.output;
  const { field, message } = issueParts(parsed.issues[0], "indexed");
  throw refusal(
    `${path}${field === "(root)" ? "" : `.${field}`}: ${message}`,
  );
}

/**
 * Runs one check of a span (or of a list outside spans) at `place`, noting
 * its refusal in `problems` instead of stopping, so every bad span is
 * counted; `undefined` when it was refused.
 */
function checked<T>(
  problems: ProblemList,
  place: string,
  check: () => T,
): T | undefined {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof DecodeRefusal)) throw error;
    problems.add(place, error.detail);
    return undefined;
  }
}

/** A JSON body of no text (or only whitespace): a request with no data. */
const EMPTY_BODY = Symbol("empty body");

function parseJson(body: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    throw refusal("body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = /^[ \t\n\r]*$/.test(text) ? EMPTY_BODY : parseStrictJson(text, {
      budget: jsonBudget(MAX_BATCH_JSON_VALUES),
      maxDepth: MAX_OTLP_JSON_DEPTH,
      // Times past 2^53 keep every digit; the schema reads the rest as doubles.
      exactIntegers: "bigint",
    });
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    if (error.reason === "too_many_values") {
      throw new BatchTooLargeError(
        `Cannot decode the OTLP trace request: the body holds more than ${MAX_BATCH_JSON_VALUES} JSON values; send smaller batches`,
        MAX_BATCH_JSON_VALUES,
      );
    }
    // The detail names a position and a rule, never the body's text.
    const what = error.reason === "too_deep"
      ? "values are nested too deeply"
      : "body is not valid JSON";
    throw refusal(
      `${what} (line ${error.line}, column ${error.column}: ${error.detail})`,
    );
  }
  // OTLP/HTTP answers a request that carries no data with success, and
  // an empty body is one in protobuf (a message with no field set).
  if (value === EMPTY_BODY) return {};
  // valibot's object schema would take an array; OTLP/JSON is always an object.
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw refusal("body must be a JSON object (an ExportTraceServiceRequest)");
  }
  checkJsonBounds(value);
  return value;
}

function parseProtobuf(body: Uint8Array): unknown {
  const { request } = otlpProtoTypes();
  // Counted on the wire first: the decoder below builds everything at once.
  checkProtobufBounds(body);
  try {
    const message = request.decode(body);
    // Plain objects with 64-bit integers as decimal strings and enums as numbers.
    return camelKeys(
      request.toObject(message, { longs: String, enums: Number }),
    );
  } catch (error) {
    const field = invalidUtf8Field(body, request);
    throw refusal(
      field === null
        ? `body is not a protobuf message (${firstLine(error)})`
        : `${field}: must be valid UTF-8 (protobuf strings are UTF-8 text)`,
      error,
    );
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? "";
}

/** Renames the decoder's snake_case field names to the OTLP/JSON ones (OTLP has no map fields). */
function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (
    value === null || typeof value !== "object" || value instanceof Uint8Array
  ) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[jsonName(key)] = camelKeys(item);
  }
  return out;
}

function flatten(request: WireRequest): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  const problems = new ProblemList();
  let index = 0;
  (request.resourceSpans ?? []).forEach((resourceSpans, r) => {
    const resourcePlace = `resourceSpans[${r}].resource.attributes`;
    const resource = checked(
      problems,
      resourcePlace,
      () => toAttributes(resourceSpans.resource?.attributes, resourcePlace),
    ) ?? new Map();
    (resourceSpans.scopeSpans ?? []).forEach((scopeSpans, s) => {
      // Checked like every attribute list, then not kept.
      const scopePlace =
        `resourceSpans[${r}].scopeSpans[${s}].scope.attributes`;
      checked(
        problems,
        scopePlace,
        () => toAttributes(scopeSpans.scope?.attributes, scopePlace),
      );
      const scope = {
        name: scopeSpans.scope?.name ?? "",
        version: scopeSpans.scope?.version ?? "",
      };
      (scopeSpans.spans ?? []).forEach((span, k) => {
        const path = `resourceSpans[${r}].scopeSpans[${s}].spans[${k}]`;
        const place = { index: index++, path, resource, scope };
        const decoded = checked(
          problems,
          path,
          () => toSpan(wireSpan(span, path), place),
        );
        if (decoded) spans.push(decoded);
      });
    });
  });
  if (problems.size > 0) throw refusal(problems.describe());
  return spans;
}

interface SpanPlace {
  index: number;
  path: string;
  resource: OtlpAttributes;
  scope: { name: string; version: string };
}

function toSpan(span: WireSpan, place: SpanPlace): OtlpSpan {
  const { path } = place;
  const parent = span.parentSpanId
    ? hexId(span.parentSpanId, 8, `${path}.parentSpanId`, true)
    : "";
  // Links are checked like every attribute list, then not kept.
  (span.links ?? []).forEach((link, l) => {
    toAttributes(link.attributes, `${path}.links[${l}].attributes`);
  });
  return {
    ...place,
    traceId: hexId(span.traceId, 16, `${path}.traceId`),
    spanId: hexId(span.spanId, 8, `${path}.spanId`),
    parentSpanId: parent === "" ? null : parent,
    name: span.name ?? "",
    kind: enumNumber(span.kind, SPAN_KINDS, `${path}.kind`),
    startTimeUnixNano: BigInt(span.startTimeUnixNano ?? 0),
    endTimeUnixNano: BigInt(span.endTimeUnixNano ?? 0),
    attributes: toAttributes(span.attributes, `${path}.attributes`),
    events: (span.events ?? []).map((event, e) => ({
      name: event.name ?? "",
      timeUnixNano: BigInt(event.timeUnixNano ?? 0),
      attributes: toAttributes(
        event.attributes,
        `${path}.events[${e}].attributes`,
      ),
    })),
    statusCode: enumNumber(
      span.status?.code,
      STATUS_CODES,
      `${path}.status.code`,
    ),
    statusMessage: span.status?.message ?? "",
  };
}

/** An enum's number: its name's place in `names`, or an integer within them. */
function enumNumber(
  value: number | string | null | undefined,
  names: readonly string[],
  field: string,
): number {
  if (value === null || value === undefined) return 0;
  const number = typeof value === "number" ? value : names.indexOf(value);
  if (!Number.isInteger(number) || number < 0 || number >= names.length) {
    throw refusal(`${field}: ${enumRule(names)}`);
  }
  return number;
}

/** Trace and span ids: hex in JSON, raw bytes in protobuf; all-zero ids are invalid. */
function hexId(
  value: string | Uint8Array,
  bytes: number,
  field: string,
  allowEmpty = false,
): string {
  const hex = typeof value === "string" ? value.toLowerCase() : toHex(value);
  if (allowEmpty && hex === "") return "";
  if (!new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(hex) || /^0+$/.test(hex)) {
    throw refusal(
      `${field}: must be a non-zero ${bytes}-byte id (${bytes * 2} hex digits)`,
    );
  }
  return hex;
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join(
    "",
  );
}

/** An attribute list or `kvlistValue` as a map; `field` names the list. */
function toAttributes(
  list: WireKeyValue[] | null | undefined,
  field: string,
  depth = 0,
): Map<string, OtlpValue> {
  const out = new Map<string, OtlpValue>();
  (list ?? []).forEach(({ key, value }, i) => {
    if (out.has(key)) {
      const first = (list ?? []).findIndex((item) => item.key === key);
      // Only the key is quoted, as the strict JSON parser names a duplicate key.
      throw refusal(
        `${field}: key ${
          JSON.stringify(key.slice(0, 64))
        } is repeated (items ${first} and ${i}); keys must be unique within one attribute list`,
      );
    }
    out.set(key, toValue(value, `${field}[${i}].value`, depth));
  });
  return out;
}

/** The value fields of an `AnyValue`, of which the OTLP data model allows one (a oneof). */
const VALUE_FIELDS = [
  "stringValue",
  "boolValue",
  "intValue",
  "doubleValue",
  "arrayValue",
  "kvlistValue",
  "bytesValue",
] as const satisfies readonly (keyof WireAnyValue)[];

function toValue(
  value: WireAnyValue | null | undefined,
  field: string,
  depth: number,
): OtlpValue {
  if (depth > MAX_VALUE_DEPTH) {
    throw refusal(
      `${field}: values are nested deeper than ${MAX_VALUE_DEPTH} levels`,
    );
  }
  if (!value) return null;
  // Reading any one of several would be a guess (JSON and protobuf would
  // guess differently), so the value is refused; null counts as unset.
  let set: typeof VALUE_FIELDS[number] | null = null;
  for (const name of VALUE_FIELDS) {
    if (value[name] === undefined || value[name] === null) continue;
    if (set !== null) {
      throw refusal(
        `${field}: holds more than one of ${
          VALUE_FIELDS.join(", ")
        }; an AnyValue holds exactly one`,
      );
    }
    set = name;
  }
  switch (set) {
    case "stringValue":
      return value.stringValue!;
    case "boolValue":
      return value.boolValue!;
    case "intValue":
      return toInt(value.intValue!, `${field}.intValue`);
    case "doubleValue":
      return toDouble(value.doubleValue!, `${field}.doubleValue`);
    case "arrayValue":
      return (value.arrayValue!.values ?? []).map((item, i) =>
        toValue(item, `${field}.arrayValue.values[${i}]`, depth + 1)
      );
    case "kvlistValue":
      // fromEntries defines each key as data, "__proto__" included.
      return Object.fromEntries(
        toAttributes(
          value.kvlistValue!.values,
          `${field}.kvlistValue.values`,
          depth + 1,
        ),
      );
    case "bytesValue":
      return typeof value.bytesValue === "string"
        ? fromBase64(value.bytesValue, `${field}.bytesValue`)
        : value.bytesValue!;
    case null:
      return null;
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Safe integers as numbers, larger int64 decimal strings exactly as strings.
 * A JSON number is kept as the producer's own value was (a JavaScript
 * exporter sends its numbers so); one that is no integer within int64
 * cannot be an `intValue` and is refused.
 */
function toInt(value: string | number, field: string): number | string {
  const int64 =
    `${field}: must be a 64-bit integer (-9223372036854775808 to 9223372036854775807)`;
  if (typeof value === "number") {
    // 2^63 itself is the first double past INT64_MAX (9223372036854775807 parses to it).
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
      return value;
    }
    throw refusal(int64);
  }
  const number = Number(value);
  if (Number.isSafeInteger(number)) return number;
  const big = BigInt(value);
  if (big < INT64_MIN || big > INT64_MAX) throw refusal(int64);
  return String(big);
}

// A decimal number, or a proto3 JSON name for a non-finite one.
const DOUBLE_TEXT =
  /^(?:-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|NaN|-?Infinity)$/;

/**
 * A double as a number, NaN and the infinities included (in JSON by their
 * proto3 names); they stay numbers so no reader mistakes them for text
 * (see {@link OtlpValue}).
 */
function toDouble(value: string | number, field: string): number {
  if (typeof value === "string" && !DOUBLE_TEXT.test(value)) {
    throw refusal(`${field}: must be a number`);
  }
  return Number(value);
}

function fromBase64(text: string, field: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch (error) {
    throw refusal(`${field}: must be base64`, error);
  }
}

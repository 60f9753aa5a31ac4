/**
 * The staging adapter protocol: four POST operations, their request schemas
 * (what an adapter accepts) and response schemas (what the runner accepts),
 * and the transport seam the runner talks through (strict HTTP for real
 * targets, in-process for the reference suite).
 *
 * @module
 */

import * as v from "valibot";
import { quoteValue } from "../echo.ts";
import { TraceError } from "../errors.ts";
import { describeIssues, objectIssueMessage } from "../issues.ts";

/** Revision of the adapter contract recorded in every report and regression. */
export const PROTOCOL_REVISION = "trace-staging/1" as const;

/** Adapter operations, each `POST base_url + "/" + op`. */
export const OPERATIONS = ["ingest", "query", "inventory", "delete"] as const;

/** One of {@link OPERATIONS}. */
export type Operation = typeof OPERATIONS[number];

/** Stores an inventory reports, in report order. */
export const STORES = [
  "source_records",
  "vector_records",
  "cache_records",
] as const;

/** One of {@link STORES}. */
export type Store = typeof STORES[number];

/** Request bodies per operation. */
export interface OperationRequests {
  /** Stores one document. */
  ingest: { namespace: string; id: string; text: string };
  /** Asks one question of one namespace. */
  query: { namespace: string; query: string };
  /** Counts the records each store holds for one namespace. */
  inventory: { namespace: string };
  /** Deletes exactly these ids of one namespace. */
  delete: { namespace: string; ids: string[] };
}

// A lone surrogate has no UTF-8 form: stored, it would be text no report,
// log or ledger can write down as sent, and no store can give back as sent.
const WellFormed = v.check(
  (text: string) => text.isWellFormed(),
  "must be well-formed Unicode (it holds a lone surrogate)",
);

const Name = (what: string) =>
  v.pipe(
    v.string("must be a string"),
    v.minLength(1, "must not be empty"),
    v.maxLength(256, `must be at most 256 characters (${what})`),
    WellFormed,
  );

function strictBody<const T extends v.ObjectEntries>(entries: T) {
  return v.strictObject(
    entries,
    objectIssueMessage(`allowed keys: ${Object.keys(entries).join(", ")}`),
  );
}

/**
 * Request schemas per operation, as an adapter checks them: listed keys only,
 * non-empty names, and bounds that match the config's (at most 1000 ids).
 */
export const REQUEST_SCHEMAS: {
  readonly [K in Operation]: v.GenericSchema<unknown, OperationRequests[K]>;
} = {
  ingest: strictBody({
    namespace: Name("namespace"),
    id: Name("id"),
    text: v.pipe(
      v.string("must be a string"),
      v.maxLength(100_000, "must be at most 100000 characters"),
      WellFormed,
    ),
  }),
  query: strictBody({
    namespace: Name("namespace"),
    query: v.pipe(
      v.string("must be a string"),
      v.maxLength(10_000, "must be at most 10000 characters"),
      WellFormed,
    ),
  }),
  inventory: strictBody({ namespace: Name("namespace") }),
  delete: strictBody({
    namespace: Name("namespace"),
    ids: v.pipe(
      v.array(Name("id"), "must be an array of ids"),
      v.maxLength(1000, "must hold at most 1000 ids"),
    ),
  }),
};

const Count = v.pipe(
  v.number("must be a non-negative integer"),
  v.integer("must be a non-negative integer"),
  v.minValue(0, "must be a non-negative integer"),
  // Past 2^53 - 1 a JSON number no longer says which integer it is.
  v.maxValue(
    Number.MAX_SAFE_INTEGER,
    "must be at most 9007199254740991 (2^53 - 1), the largest integer a JSON number carries exactly",
  ),
);

/** Parsed response per operation. */
export interface OperationResponses {
  /** The id the adapter stored. */
  ingest: { id: string };
  /**
   * What the application would answer: `text`, and whatever else the answer
   * carries (sources, retrieved chunks), kept because a marker there is
   * retrieval evidence too.
   */
  query: { text: string; [key: string]: unknown };
  /** How many records each store holds for the namespace. */
  inventory: Inventory;
  /** The deletion was accepted. */
  delete: { acknowledged: true };
}

/** An inventory answer. */
export interface Inventory {
  /** Whether every store was fully enumerated for the namespace; `false` makes the reading unusable. */
  complete: boolean;
  /** Records in the source store (documents as written). */
  source_records: number;
  /** Records in the vector index. */
  vector_records: number;
  /** Entries of the answer cache that hold the namespace's data. */
  cache_records: number;
}

/**
 * Response schemas per operation; listed keys are strict, extra keys are
 * ignored, except that a query answer keeps them (a marker in any of them is
 * retrieval evidence). An inventory's other counts are read apart
 * ({@link otherInventoryCounts}).
 */
export const RESPONSE_SCHEMAS: {
  readonly [K in Operation]: v.GenericSchema<unknown, OperationResponses[K]>;
} = {
  ingest: v.object({ id: v.string("must be a string") }, objectIssueMessage()),
  query: v.looseObject(
    { text: v.string("must be a string") },
    objectIssueMessage(),
  ),
  inventory: v.object({
    complete: v.boolean("must be a boolean"),
    source_records: Count,
    vector_records: Count,
    cache_records: Count,
  }, objectIssueMessage()),
  delete: v.object(
    { acknowledged: v.literal(true, "must be true") },
    objectIssueMessage(),
  ),
};

/**
 * The keys of an inventory answer beside the contract's four whose value is
 * a count above 0 (a safe integer), in the answer's order: a store the
 * adapter counts but does not report in a count Trace reads. Nested objects
 * (a breakdown of the counts) and other values are not counts.
 */
export function otherInventoryCounts(
  answer: Record<string, unknown>,
): [key: string, count: number][] {
  return Object.entries(answer).filter((entry): entry is [string, number] => {
    const [key, value] = entry;
    return !INVENTORY_KEYS.has(key) && typeof value === "number" &&
      Number.isSafeInteger(value) && value > 0;
  });
}

const INVENTORY_KEYS: ReadonlySet<string> = new Set([
  "complete",
  ...STORES,
]);

/**
 * How a `malformed_json` error's detail begins when the answer was no JSON
 * object at all (an empty body, text that is not JSON or not UTF-8, JSON
 * of another type): what another service answers, an HTML page among them.
 * The strict client words them so; advice reads them to tell a server that
 * is no adapter from an adapter that answered badly.
 */
export const NOT_A_JSON_OBJECT = {
  empty: "the answer's body is empty",
  syntax: "the answer is not valid JSON",
  encoding: "the answer is not valid UTF-8 text",
  type: "the answer is JSON but not an object",
} as const;

/** Which of {@link NOT_A_JSON_OBJECT} a request error's detail says the answer was; `null` for none. */
export function notAJsonObjectKind(
  detail: string,
): keyof typeof NOT_A_JSON_OBJECT | null {
  const kinds = Object.keys(
    NOT_A_JSON_OBJECT,
  ) as (keyof typeof NOT_A_JSON_OBJECT)[];
  return kinds.find((kind) => detail.startsWith(NOT_A_JSON_OBJECT[kind])) ??
    null;
}

/** Whether a request error's detail says the answer was no JSON object at all ({@link NOT_A_JSON_OBJECT}). */
export function notAJsonObject(detail: string): boolean {
  return notAJsonObjectKind(detail) !== null;
}

/** Why a request produced no usable answer; stable, content-free. */
export const REQUEST_FAILURES = [
  "timeout",
  "connect",
  "tls",
  "http_status",
  "redirect",
  "too_large",
  "framing",
  "malformed_json",
  "schema",
  "refused",
] as const;

/** One of {@link REQUEST_FAILURES}. */
export type RequestFailure = typeof REQUEST_FAILURES[number];

/** A request that produced no usable answer. Messages never carry response bodies. */
export class ProtocolError extends TraceError {
  /** What class of failure this was. */
  readonly failure: RequestFailure;
  /** HTTP status when one was received. */
  readonly status: number | undefined;

  /** `failure` decides the error code: `protocol` for bad answers, `transport` otherwise. */
  constructor(
    failure: RequestFailure,
    message: string,
    options?: ErrorOptions & { status?: number },
  ) {
    super(
      failure === "schema" || failure === "malformed_json"
        ? "protocol"
        : "transport",
      message,
      options,
    );
    this.name = "ProtocolError";
    this.failure = failure;
    this.status = options?.status;
  }
}

/**
 * Answers a transport rewrote before the runner saw them (a bearer token the
 * adapter echoed, replaced by `[redacted token]`). A rewrite can cut text
 * that held a marker, or merge two keys into one: such an answer can still
 * show a marker, never its absence.
 */
const ALTERED_ANSWERS = new WeakSet<object>();

/** Records that a transport rewrote `answer` before returning it. */
export function markAltered(answer: object): void {
  ALTERED_ANSWERS.add(answer);
}

/** Whether a transport rewrote `answer` ({@link markAltered}). */
export function wasAltered(answer: object): boolean {
  return ALTERED_ANSWERS.has(answer);
}

/** Options for one request. */
export interface RequestOptions {
  /** Whole-request budget: connect, headers and body. */
  timeoutMs: number;
  /**
   * Calls the request off before its budget runs out: the transport closes
   * its connection and throws a {@link ProtocolError} `timeout`. A transport
   * that answers at once may ignore it.
   */
  signal?: AbortSignal;
}

/**
 * How the runner reaches a staging app. Implementations return the parsed
 * JSON object (not yet schema-checked) or throw {@link ProtocolError}.
 */
export interface StagingTransport {
  /** Sends one operation and returns the answer's JSON object. */
  post(
    op: Operation,
    body: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<Record<string, unknown>>;
  /**
   * Opens a connection to the target and closes it without sending a request
   * (TCP, plus the TLS handshake for https), so an unreachable target is
   * found before anything is written; throws {@link ProtocolError}. Absent
   * on transports that have nothing to connect to.
   */
  probe?(options: RequestOptions): Promise<void>;
  /** Releases connections or servers the transport holds. */
  close?(): void | Promise<void>;
}

/** A request body an adapter refuses (HTTP 400); the message names the field, never its value. */
export class StagingRequestError extends TraceError {
  /** `message` is one line: `field: what is wrong`. */
  constructor(message: string, options?: ErrorOptions) {
    super("config_invalid", message, options);
    this.name = "StagingRequestError";
  }
}

/**
 * Checks a request body against its operation schema (the adapter's side).
 * Throws `StagingRequestError` for a body the contract refuses and
 * `RangeError` for an operation it does not have.
 */
export function parseRequest<K extends Operation>(
  op: K,
  body: unknown,
): OperationRequests[K] {
  // An adapter that routes its own paths may hand over any string; without this
  // it would fail inside valibot with no word of which operation was wrong.
  if (!(OPERATIONS as readonly string[]).includes(op)) {
    throw new RangeError(
      `Unknown staging operation ${quoteValue(String(op))}: expected one of ${
        OPERATIONS.join(", ")
      }`,
    );
  }
  // valibot's object schemas accept arrays, which are never a valid operation body.
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new StagingRequestError("body: must be a JSON object");
  }
  const result = v.safeParse(REQUEST_SCHEMAS[op], body);
  if (!result.success) {
    throw new StagingRequestError(describeIssues(result.issues));
  }
  return result.output as OperationRequests[K];
}

/** Top-level keys a catch-all handler reports a failure under (`errors`: GraphQL, JSON:API). */
const FAILURE_KEYS = ["error", "errors"] as const;

/**
 * Whether a 200 answer says it failed: a catch-all handler that answers
 * `{"acknowledged": true, "error": "…"}` or counts of 0 beside an error
 * would otherwise read as a clean deletion. Only the top-level `error` and
 * `errors` keys, and only a value that says something: not null, false, 0
 * (an errno-style success), "", [] or {}.
 */
function reportsFailure(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  return FAILURE_KEYS.some((key) =>
    Object.hasOwn(body, key) &&
    saysSomething((body as Record<string, unknown>)[key])
  );
}

function saysSomething(value: unknown): boolean {
  if (value === null || value === false || value === 0 || value === "") {
    return false;
  }
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** Checks a response object against its operation schema. */
export function parseResponse<K extends Operation>(
  op: K,
  body: unknown,
): OperationResponses[K] {
  if (reportsFailure(body)) {
    throw new ProtocolError(
      "schema",
      `/${op} response: HTTP 200 but its top-level error or errors key holds a value, so the operation may have failed; answer a failure with a non-200 status, and leave the key out (or null) when the operation succeeded`,
    );
  }
  const result = v.safeParse(RESPONSE_SCHEMAS[op], body);
  if (!result.success) {
    throw new ProtocolError(
      "schema",
      `/${op} response: ${describeIssues(result.issues)}`,
    );
  }
  // A query answer is kept as it came, checked: valibot leaves out keys
  // such as `__proto__` and `constructor`, and a marker there still counts.
  return (op === "query" ? body : result.output) as OperationResponses[K];
}

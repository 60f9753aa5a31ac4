/**
 * The staging adapter protocol: four POST operations, their request and
 * response shapes, and the transport seam the runner talks through (strict
 * HTTP for real targets, in-process for the reference suite).
 *
 * @module
 */

import * as v from "valibot";
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
  ingest: { namespace: string; id: string; text: string };
  query: { namespace: string; query: string };
  inventory: { namespace: string };
  delete: { namespace: string; ids: string[] };
}

const Count = v.pipe(
  v.number("must be a non-negative integer"),
  v.safeInteger("must be a non-negative integer"),
  v.minValue(0, "must be a non-negative integer"),
);

/** Response schemas per operation; extra keys are ignored, listed keys are strict. */
export const RESPONSE_SCHEMAS = {
  ingest: v.object({ id: v.string("must be a string") }, objectIssueMessage()),
  query: v.object({ text: v.string("must be a string") }, objectIssueMessage()),
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
} as const;

/** Parsed response per operation. */
export type OperationResponses = {
  [K in Operation]: v.InferOutput<typeof RESPONSE_SCHEMAS[K]>;
};

/** An inventory answer. */
export type Inventory = OperationResponses["inventory"];

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

/** Options for one request. */
export interface RequestOptions {
  /** Whole-request budget: connect, headers and body. */
  timeoutMs: number;
}

/**
 * How the runner reaches a staging app. Implementations return the parsed
 * JSON object (not yet schema-checked) or throw {@link ProtocolError}.
 */
export interface StagingTransport {
  post(
    op: Operation,
    body: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<Record<string, unknown>>;
  close?(): void | Promise<void>;
}

/** Checks a response object against its operation schema. */
export function parseResponse<K extends Operation>(
  op: K,
  body: unknown,
): OperationResponses[K] {
  const result = v.safeParse(RESPONSE_SCHEMAS[op], body);
  if (!result.success) {
    throw new ProtocolError(
      "schema",
      `/${op} response: ${describeIssues(result.issues)}`,
    );
  }
  return result.output as OperationResponses[K];
}

/** Sends one typed operation and validates its answer. */
export async function callOperation<K extends Operation>(
  transport: StagingTransport,
  op: K,
  body: OperationRequests[K],
  options: RequestOptions,
): Promise<OperationResponses[K]> {
  const raw = await transport.post(
    op,
    body as unknown as Record<string, unknown>,
    options,
  );
  return parseResponse(op, raw);
}

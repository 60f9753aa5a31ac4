/**
 * JSON API of the observability index: batch ingest, paged query, summary.
 * Mount with `app.route("/", createEventsApi({ db, authorize }))`. The
 * mounting app decides who may call it (`authorize`, e.g. the ingest bearer
 * token); without it every request is served.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { TraceDb } from "../lib/db.ts";
import { errorMessage, TraceError } from "../lib/errors.ts";
import {
  IngestBatchError,
  IngestConflictError,
  ingestEvents,
} from "../lib/obs/ingest.ts";
import type { EventIssue } from "../lib/obs/normalize.ts";
import { parseNdjsonEvents } from "../lib/obs/ndjson.ts";
import { queryTraceEvents } from "../lib/obs/query.ts";
import { traceQueryFromParams } from "../lib/obs/query_params.ts";
import { summarizeTraceEvents } from "../lib/obs/summaries.ts";

/** Default request body limit (after decompression): 5 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;

/** Batches up to this size list every item in the response. */
const ITEMIZED_RESPONSE_LIMIT = 1_000;

/** Dependencies of {@link createEventsApi}. */
export interface EventsApiDeps {
  db: TraceDb;
  /** Returns false to answer 401; absent means the mounting app already authorized. */
  authorize?: (c: Context) => boolean | Promise<boolean>;
  /** Body limit in bytes after decompression (default 5 MiB). */
  maxBodyBytes?: number;
}

/** A request that must be answered with `status` and a JSON error. */
class HttpProblem extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly items?: EventIssue[],
  ) {
    super(message);
  }
}

/** Creates the `/api/events` sub-app. */
export function createEventsApi(deps: EventsApiDeps): Hono {
  const maxBytes = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const app = new Hono();
  app.use("/api/events", authorizeWith(deps.authorize));
  app.use("/api/events/*", authorizeWith(deps.authorize));

  app.post("/api/events", async (c) => {
    try {
      const inputs = await readEvents(c.req.raw, maxBytes);
      const result = await ingestEvents(deps.db, inputs, { source: "api" });
      return c.json({
        accepted: inputs.length,
        inserted: result.inserted,
        duplicates: result.duplicates,
        ...(inputs.length <= ITEMIZED_RESPONSE_LIMIT
          ? { items: result.items }
          : {}),
      });
    } catch (error) {
      return problem(c, error);
    }
  });

  app.get("/api/events", async (c) => {
    try {
      const query = traceQueryFromParams(new URL(c.req.url).searchParams);
      return c.json(await queryTraceEvents(deps.db, query));
    } catch (error) {
      return problem(c, error);
    }
  });

  app.get("/api/events/summary", async (c) => {
    try {
      const { limit: _limit, cursor, ...scope } = traceQueryFromParams(
        new URL(c.req.url).searchParams,
      );
      if (cursor !== undefined) {
        throw new HttpProblem(400, "A summary takes no cursor; remove it");
      }
      return c.json(await summarizeTraceEvents(deps.db, scope));
    } catch (error) {
      return problem(c, error);
    }
  });

  return app;
}

function authorizeWith(authorize: EventsApiDeps["authorize"]) {
  return async (c: Context, next: () => Promise<void>) => {
    if (authorize && !(await authorize(c))) {
      return c.json({
        error: { code: "unauthorized", message: "Authorization required" },
      }, 401);
    }
    await next();
  };
}

const STATUS_BY_CODE: Partial<Record<string, ContentfulStatusCode>> = {
  config_invalid: 400,
  usage: 400,
  refused: 400,
  not_found: 404,
  conflict: 409,
  storage: 503,
  unauthorized: 401,
  forbidden: 403,
};

function problem(c: Context, error: unknown): Response {
  if (error instanceof HttpProblem) {
    return c.json({
      error: {
        code: "invalid_request",
        message: error.message,
        items: error.items,
      },
    }, error.status);
  }
  if (error instanceof TraceError) {
    const items =
      error instanceof IngestBatchError || error instanceof IngestConflictError
        ? error.items
        : undefined;
    return c.json(
      { error: { code: error.code, message: errorMessage(error), items } },
      STATUS_BY_CODE[error.code] ?? 500,
    );
  }
  return c.json(
    { error: { code: "internal", message: "Internal error" } },
    500,
  );
}

/** Reads a JSON array, a single JSON object or NDJSON, size-limited and optionally gzipped. */
async function readEvents(
  request: Request,
  maxBytes: number,
): Promise<unknown[]> {
  const text = await readBody(request, maxBytes);
  const type = (request.headers.get("content-type") ?? "application/json")
    .split(";")[0]!
    .trim().toLowerCase();
  if (type === "application/x-ndjson" || type === "application/jsonl") {
    return parseNdjsonEvents(text);
  }
  if (type !== "application/json") {
    throw new HttpProblem(
      415,
      `Unsupported content type ${type}; send application/json or application/x-ndjson`,
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpProblem(
      400,
      "Cannot ingest the batch: the body is not valid JSON",
    );
  }
  if (Array.isArray(body)) return body;
  if (body !== null && typeof body === "object") return [body];
  throw new HttpProblem(
    400,
    "Cannot ingest the batch: send an event object or an array of events",
  );
}

async function readBody(request: Request, maxBytes: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const encoding = (request.headers.get("content-encoding") ?? "identity")
    .trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") {
    throw new HttpProblem(
      415,
      `Unsupported content encoding ${encoding}; send identity or gzip`,
    );
  }
  if (!request.body) return "";
  let stream: ReadableStream<Uint8Array> = request.body;
  if (encoding === "gzip") {
    stream = stream.pipeThrough(
      new DecompressionStream("gzip") as unknown as ReadableWritablePair<
        Uint8Array,
        Uint8Array
      >,
    );
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      total += chunk.byteLength;
      // Checked while reading so a compressed bomb stops at the limit.
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof HttpProblem) throw error;
    throw new HttpProblem(
      400,
      "Cannot read the request body: it is not valid gzip",
    );
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HttpProblem(
      400,
      "Cannot read the request body: it is not valid UTF-8",
    );
  }
}

function tooLarge(maxBytes: number): HttpProblem {
  return new HttpProblem(
    413,
    `Request body exceeds ${maxBytes} bytes; split the batch`,
  );
}

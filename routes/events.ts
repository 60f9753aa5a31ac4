/**
 * JSON API of the observability index: batch ingest, paged query, summary.
 * Mount inside {@link createApp} (`routes/app.ts`), which guards it and
 * answers every error this sub-app throws.
 *
 * @module
 */

import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { TraceDb } from "../lib/db.ts";
import { quoteValue } from "../lib/echo.ts";
import {
  jsonBudget,
  parseStrictJson,
  StrictJsonError,
} from "../lib/json/strict_json.ts";
import {
  BatchTooLargeError,
  ingestEvents,
  MAX_BATCH_EVENTS,
  MAX_BATCH_JSON_VALUES,
  readNdjsonEvents,
} from "../lib/obs/ingest/mod.ts";
import {
  queryTraceEvents,
  summarizeTraceEvents,
  traceFilterFromParams,
  traceQueryFromParams,
} from "../lib/obs/query/mod.ts";
import {
  type BodyLimits,
  DEFAULT_BODY_LIMITS,
  mediaType,
  readRequestBody,
  refuseUnread,
  requireBatchSize,
  utf8Text,
} from "./_body.ts";
import { methodNotAllowed } from "./_errors.ts";
import { noteItems } from "./_request_log.ts";
import { scopeFilter } from "./access.ts";

/** Batches up to this size list every item in the response. */
const ITEMIZED_RESPONSE_LIMIT = 1_000;

const JSON_TYPE = "application/json";
const NDJSON_TYPES = ["application/x-ndjson", "application/jsonl"];

/** Dependencies of {@link createEventsApi}. */
export interface EventsApiDeps {
  db: TraceDb;
  /** Body size bounds (default 8 MiB on the wire, 32 MiB inflated). */
  limits?: BodyLimits;
}

/** An ingest body: its events, and their source lines when it was NDJSON. */
interface EventBatch {
  events: unknown[];
  lines?: number[];
}

/** Creates the `/api/events` sub-app. */
export function createEventsApi(deps: EventsApiDeps): Hono {
  const limits = deps.limits ?? DEFAULT_BODY_LIMITS;
  const app = new Hono();

  app.post("/api/events", async (c) => {
    const batch = await readEvents(c.req.raw, limits);
    noteItems(c.req.raw, batch.events.length, "events");
    requireBatchSize(batch.events.length, "events");
    const result = await ingestEvents(deps.db, batch.events, {
      source: "api",
      ...(batch.lines ? { lines: batch.lines } : {}),
    });
    return c.json({
      accepted: batch.events.length,
      inserted: result.inserted,
      duplicates: result.duplicates,
      ...(batch.events.length <= ITEMIZED_RESPONSE_LIMIT
        ? { items: result.items }
        : {}),
    });
  });

  app.get("/api/events", async (c) => {
    // An operator's scope binds the query; ingest clients read unscoped.
    const query = scopeFilter(
      c,
      traceQueryFromParams(new URL(c.req.url).searchParams),
    );
    return c.json(await queryTraceEvents(deps.db, query));
  });

  app.get("/api/events/summary", async (c) => {
    const filter = scopeFilter(
      c,
      traceFilterFromParams(new URL(c.req.url).searchParams),
    );
    return c.json(await summarizeTraceEvents(deps.db, filter));
  });

  app.all("/api/events", (c) => methodNotAllowed(c, ["GET", "POST"]));
  app.all("/api/events/summary", (c) => methodNotAllowed(c, ["GET"]));
  return app;
}

/**
 * Reads a JSON array, a single JSON object or NDJSON. An empty body, an empty
 * array and NDJSON without events are all an empty batch.
 */
async function readEvents(
  request: Request,
  limits: BodyLimits,
): Promise<EventBatch> {
  const type = mediaType(request) || JSON_TYPE;
  const ndjson = NDJSON_TYPES.includes(type);
  if (!ndjson && type !== JSON_TYPE) {
    return await refuseUnread(
      request,
      415,
      `Cannot read the request: Content-Type ${
        quoteValue(type)
      } is not supported; send application/json or application/x-ndjson`,
    );
  }
  const text = utf8Text(await readRequestBody(request, limits));
  // Parsed in slices: a large body leaves other requests their turns.
  if (ndjson) return await readNdjsonEvents(text);
  if (text.trim() === "") return { events: [] };
  const body = parseJsonBody(text);
  if (Array.isArray(body)) return { events: body };
  if (body !== null && typeof body === "object") return { events: [body] };
  throw new HTTPException(400, {
    message:
      "Cannot ingest the batch: send an event object or an array of events",
  });
}

/**
 * Parses a JSON body strictly (duplicate keys and integers a double would
 * round are refused), stopping past {@link MAX_BATCH_EVENTS} items or
 * {@link MAX_BATCH_JSON_VALUES} values before building more.
 */
function parseJsonBody(text: string): unknown {
  try {
    return parseStrictJson(text, {
      budget: jsonBudget(MAX_BATCH_JSON_VALUES),
      maxTopLevelItems: MAX_BATCH_EVENTS,
      exactIntegers: true,
    });
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    if (error.reason === "too_many_items") {
      throw new BatchTooLargeError(
        `Cannot ingest the batch: more than ${MAX_BATCH_EVENTS} events; send smaller batches`,
        MAX_BATCH_EVENTS,
      );
    }
    if (error.reason === "too_many_values") {
      throw new BatchTooLargeError(
        `Cannot ingest the batch: the body holds more than ${MAX_BATCH_JSON_VALUES} JSON values; send smaller batches`,
        MAX_BATCH_JSON_VALUES,
      );
    }
    // The detail names a position and a rule, never the body's text.
    const ndjson = error.reason === "trailing_data" && error.line > 1
      ? "; for one event per line, send Content-Type: application/x-ndjson"
      : "";
    throw new HTTPException(400, {
      message:
        `Cannot ingest the batch: the body is not valid JSON (line ${error.line}, column ${error.column}: ${error.detail})${ndjson}`,
    });
  }
}

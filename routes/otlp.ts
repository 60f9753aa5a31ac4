/**
 * OTLP/HTTP trace receiver: `POST /v1/traces` with a JSON or protobuf
 * `ExportTraceServiceRequest`, optionally gzip-compressed. The spans of one
 * request are mapped and ingested as one all-or-nothing batch; responses
 * follow OTLP/HTTP (an `ExportTraceServiceResponse` on success, a
 * `google.rpc.Status` on refusal, both in the request's encoding).
 * Mount with `app.route("/", createOtlpApi({ db, authorize }))`: the
 * mounting app decides who may call it; without `authorize` every request
 * is served.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { TraceDb } from "../lib/db.ts";
import {
  IngestBatchError,
  IngestConflictError,
  ingestEvents,
  MAX_BATCH_EVENTS,
} from "../lib/obs/ingest.ts";
import {
  OTLP_BODY_LIMITS,
  type OtlpBodyLimits,
  readOtlpBody,
} from "../lib/obs/otlp_body.ts";
import { decodeOtlpTraces, type OtlpEncoding } from "../lib/obs/otlp_decode.ts";
import { OtlpRequestError } from "../lib/obs/otlp_error.ts";
import { mapOtlpSpans } from "../lib/obs/otlp_mapping.ts";
import {
  exportResponse,
  type OtlpResponseBody,
  statusResponse,
} from "../lib/obs/otlp_response.ts";

/** What the OTLP receiver needs. */
export interface OtlpApiDeps {
  db: TraceDb;
  /** Returns false to answer 401; absent means the mounting app already authorized. */
  authorize?: (c: Context) => boolean | Promise<boolean>;
  /** Tenant for spans whose resource has no `tenant.id` / `application.id`. */
  defaultApplicationId?: string;
  /** Body size bounds (default 8 MiB on the wire, 32 MiB inflated). */
  limits?: OtlpBodyLimits;
  /** Clock for `received_at`, in epoch ms (tests pin it). */
  now?: () => number;
}

const ENCODING_BY_MEDIA_TYPE: Readonly<Record<string, OtlpEncoding>> = {
  "application/json": "json",
  "application/x-protobuf": "protobuf",
  "application/protobuf": "protobuf",
};

/** Builds the OTLP/HTTP receiver (no listening; mount it at the server root). */
export function createOtlpApi(deps: OtlpApiDeps): Hono {
  const app = new Hono();
  const limits = deps.limits ?? OTLP_BODY_LIMITS;
  const authorize = deps.authorize;
  if (authorize) {
    app.use("/v1/traces", async (c, next) => {
      if (!(await authorize(c))) {
        await c.req.raw.body?.cancel();
        return jsonError(c, 401, "unauthorized", "Authorization required");
      }
      await next();
    });
  }

  app.post("/v1/traces", async (c) => {
    const mediaType = (c.req.header("content-type") ?? "").split(";")[0]!
      .trim().toLowerCase();
    const encoding = ENCODING_BY_MEDIA_TYPE[mediaType];
    if (!encoding) {
      await c.req.raw.body?.cancel();
      const message =
        `Cannot read the OTLP request: Content-Type "${mediaType}" is not supported; send application/json or application/x-protobuf`;
      return jsonError(c, 415, "unsupported_media_type", message);
    }
    try {
      const declared = Number(c.req.header("content-length") ?? 0);
      if (declared > limits.maxBytes) {
        await c.req.raw.body?.cancel();
        throw new OtlpRequestError(
          413,
          `Cannot read the OTLP request: the request body exceeds ${limits.maxBytes} bytes; send smaller batches`,
        );
      }
      const body = await readOtlpBody(
        c.req.raw.body,
        c.req.header("content-encoding") ?? null,
        limits,
      );
      const spans = decodeOtlpTraces(body, encoding);
      if (spans.length > MAX_BATCH_EVENTS) {
        throw new OtlpRequestError(
          413,
          `Cannot ingest the OTLP request: ${spans.length} spans exceed the limit of ${MAX_BATCH_EVENTS}; send smaller batches`,
        );
      }
      const { events, warnings } = mapOtlpSpans(spans, {
        ...(deps.defaultApplicationId === undefined
          ? {}
          : { defaultApplicationId: deps.defaultApplicationId }),
      });
      if (events.length > 0) {
        await ingestEvents(deps.db, events, {
          source: "otlp",
          ...(deps.now ? { now: deps.now } : {}),
        });
      }
      const partial = warnings.length > 0
        ? { rejectedSpans: 0, errorMessage: warnings.join("; ") }
        : undefined;
      return send(exportResponse(encoding, partial), 200);
    } catch (error) {
      const refusal = asRefusal(error);
      if (!refusal) throw error;
      return send(
        statusResponse(encoding, refusal.status, refusal.message),
        refusal.status,
      );
    }
  });

  app.all(
    "/v1/traces",
    (c) => {
      c.header("Allow", "POST");
      return jsonError(
        c,
        405,
        "method_not_allowed",
        `Method ${c.req.method} is not allowed on /v1/traces; use POST`,
      );
    },
  );
  return app;
}

function jsonError(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
): Response {
  return c.json({ error: { code, message } }, status);
}

function send(
  response: OtlpResponseBody,
  status: ContentfulStatusCode,
): Response {
  return new Response(response.body, {
    status,
    headers: { "content-type": response.contentType },
  });
}

/** Refusals this receiver answers itself; anything else goes to the app's error handler. */
function asRefusal(error: unknown): OtlpRequestError | null {
  if (error instanceof OtlpRequestError) return error;
  if (error instanceof IngestConflictError) {
    return new OtlpRequestError(409, error.message, { cause: error });
  }
  if (error instanceof IngestBatchError) {
    return new OtlpRequestError(400, error.message, { cause: error });
  }
  return null;
}

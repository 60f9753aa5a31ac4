/**
 * OTLP/HTTP trace receiver: `POST /v1/traces` with a JSON or protobuf
 * `ExportTraceServiceRequest`, optionally gzip-compressed. The spans of one
 * request are mapped and ingested as one all-or-nothing batch; responses
 * follow OTLP/HTTP (an `ExportTraceServiceResponse` on success, a
 * `google.rpc.Status` on refusal, both in the request's encoding). Spans
 * that name no tenant take the application bound to the ingest credential
 * (`credentialScope`), else the server's default, else their resource's
 * `service.name` (`lib/obs/otlp/tenant.ts`); the answer's `partial_success`
 * message says which was used. Mount
 * inside {@link createApp} (`routes/app.ts`), which guards it. Errors are
 * mapped by `routes/_errors.ts` like everywhere else; this sub-app only
 * encodes the answer the way OTLP requires.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { TraceDb } from "../lib/db.ts";
import { quoteValue } from "../lib/echo.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { incrementCounter } from "../lib/obs/mod.ts";
import {
  decodeOtlpTraces,
  exportResponse,
  mapOtlpSpans,
  type OtlpEncoding,
  type OtlpResponseBody,
  statusResponse,
  tenantForRequest,
  type TenantRequest,
} from "../lib/obs/otlp/mod.ts";
import {
  type BodyLimits,
  DEFAULT_BODY_LIMITS,
  mediaType,
  readRequestBody,
  refuseUnread,
  requireBatchSize,
} from "./_body.ts";
import {
  type ErrorAnswer,
  methodNotAllowed,
  reportError,
  type ServerLog,
  stderrLog,
} from "./_errors.ts";
import { noteItems } from "./_request_log.ts";

/** What the OTLP receiver needs. */
export interface OtlpApiDeps {
  db: TraceDb;
  /** Tenant for spans that name none (before their resource's `service.name`). */
  defaultApplicationId?: string;
  /**
   * The tenant scope of the credential that sent a request (an operator
   * account's `application_id`): its spans may name no other application,
   * and those that name none take it. Absent, or answering `undefined`: an
   * unscoped credential.
   */
  credentialScope?: (c: Context) => TenantRequest["credential"];
  /** Body size bounds (default 8 MiB on the wire, 32 MiB inflated). */
  limits?: BodyLimits;
  /** Clock for `received_at`, in epoch ms (tests pin it). */
  now?: () => number;
  /** Where server-side failures are described (default: stderr). */
  log?: ServerLog;
}

/** The path OTLP/HTTP exporters send traces to. */
export const OTLP_TRACES_PATH = "/v1/traces";

const ENCODING_BY_MEDIA_TYPE: Readonly<Record<string, OtlpEncoding>> = {
  "application/json": "json",
  "application/x-protobuf": "protobuf",
  "application/protobuf": "protobuf",
};

/** Builds the OTLP/HTTP receiver (no listening; mount it at the server root). */
export function createOtlpApi(deps: OtlpApiDeps): Hono {
  const app = new Hono();
  const limits = deps.limits ?? DEFAULT_BODY_LIMITS;
  const log = deps.log ?? stderrLog;

  app.post(OTLP_TRACES_PATH, async (c) => {
    const encoding = ENCODING_BY_MEDIA_TYPE[mediaType(c.req.raw)];
    if (!encoding) {
      return await refuseUnread(
        c.req.raw,
        415,
        `Cannot read the OTLP request: Content-Type ${
          quoteValue(mediaType(c.req.raw))
        } is not supported; send application/json or application/x-protobuf`,
      );
    }
    const body = await readRequestBody(c.req.raw, limits);
    const spans = decodeOtlpTraces(body, encoding);
    noteItems(c.req.raw, spans.length, "spans");
    requireBatchSize(spans.length, "spans");
    const tenant = tenantForRequest({
      credential: deps.credentialScope?.(c),
      defaultApplicationId: deps.defaultApplicationId,
    });
    const { events, warnings, droppedAttributes } = mapOtlpSpans(spans, {
      tenant,
    });
    await ingestEvents(deps.db, events, {
      source: "otlp",
      ...(deps.now ? { now: deps.now } : {}),
    });
    incrementCounter("attributes_dropped", droppedAttributes);
    const partial = warnings.length > 0
      ? { rejectedSpans: 0, errorMessage: warnings.join("; ") }
      : undefined;
    return send(c, exportResponse(encoding, partial), 200);
  });

  app.all(OTLP_TRACES_PATH, (c) => methodNotAllowed(c, ["POST"]));

  app.onError((error, c) =>
    otlpErrorAnswer(c, reportError(error, c.req.raw, log))
  );
  return app;
}

/**
 * `answer` as OTLP/HTTP requires a refusal: a `google.rpc.Status` in the
 * request's encoding (the JSON one also carries Trace's `error` object).
 * The app's guards refuse before this sub-app runs (a missing token, a
 * foreign Host), so `createApp` answers those through here too: an
 * exporter that decodes a protobuf Status would otherwise get JSON.
 */
export function otlpErrorAnswer(c: Context, answer: ErrorAnswer): Response {
  const encoding = ENCODING_BY_MEDIA_TYPE[mediaType(c.req.raw)] ?? "json";
  return send(
    c,
    statusResponse(encoding, {
      status: answer.status,
      code: answer.body.error.code,
      message: answer.body.error.message,
    }),
    answer.status,
  );
}

/** Sends an encoded body, keeping headers already set on `c` (e.g. `Allow`). */
function send(
  c: Context,
  response: OtlpResponseBody,
  status: ContentfulStatusCode,
): Response {
  return c.body(response.body, status, {
    "content-type": response.contentType,
  });
}

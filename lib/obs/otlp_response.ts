/**
 * OTLP/HTTP response bodies in the encoding of the request: an
 * `ExportTraceServiceResponse` (with `partial_success` when there is something
 * to report) on success, a `google.rpc.Status` on refusal.
 *
 * @module
 */

import type { OtlpEncoding } from "./otlp_decode.ts";
import type { OtlpRefusalStatus } from "./otlp_error.ts";
import { otlpProtoTypes } from "./otlp_proto.ts";

/** `Content-Type` of each encoding. */
export const OTLP_CONTENT_TYPES = {
  json: "application/json",
  protobuf: "application/x-protobuf",
} as const satisfies Record<OtlpEncoding, string>;

/** What `partial_success` reports: rejected spans, or a warning with none rejected. */
export interface OtlpPartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

/** An encoded response body and its content type. */
export interface OtlpResponseBody {
  body: string | Uint8Array<ArrayBuffer>;
  contentType: string;
}

// google.rpc.Code values, and the error codes of the JSON API, for each refusal.
const REFUSAL_CODES: Record<
  OtlpRefusalStatus,
  { rpc: number; error: string }
> = {
  400: { rpc: 3, error: "invalid_request" }, // INVALID_ARGUMENT
  409: { rpc: 6, error: "conflict" }, // ALREADY_EXISTS
  413: { rpc: 8, error: "payload_too_large" }, // RESOURCE_EXHAUSTED
  415: { rpc: 3, error: "unsupported_media_type" }, // INVALID_ARGUMENT
};

/** Encodes an `ExportTraceServiceResponse`. */
export function exportResponse(
  encoding: OtlpEncoding,
  partial?: OtlpPartialSuccess,
): OtlpResponseBody {
  const contentType = OTLP_CONTENT_TYPES[encoding];
  if (encoding === "json") {
    // Proto3 JSON writes 64-bit integers as strings.
    const body = partial
      ? {
        partialSuccess: {
          rejectedSpans: String(partial.rejectedSpans),
          errorMessage: partial.errorMessage,
        },
      }
      : {};
    return { body: JSON.stringify(body), contentType };
  }
  const { response } = otlpProtoTypes();
  const message = response.create(
    partial
      ? {
        partial_success: {
          rejected_spans: partial.rejectedSpans,
          error_message: partial.errorMessage,
        },
      }
      : {},
  );
  return { body: bytes(response.encode(message).finish()), contentType };
}

/** Encodes a refusal as `google.rpc.Status` (JSON also carries the API's `error` object). */
export function statusResponse(
  encoding: OtlpEncoding,
  status: OtlpRefusalStatus,
  message: string,
): OtlpResponseBody {
  const { rpc: code, error } = REFUSAL_CODES[status];
  const contentType = OTLP_CONTENT_TYPES[encoding];
  if (encoding === "json") {
    return {
      body: JSON.stringify({ code, message, error: { code: error, message } }),
      contentType,
    };
  }
  const type = otlpProtoTypes().status;
  return {
    body: bytes(type.encode(type.create({ code, message })).finish()),
    contentType,
  };
}

/** A copy backed by a plain ArrayBuffer, as `Response` bodies require. */
function bytes(view: Uint8Array): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(view);
}

/**
 * OTLP/HTTP response bodies in the encoding of the request: an
 * `ExportTraceServiceResponse` (with `partial_success` when there is something
 * to report) on success, a `google.rpc.Status` on refusal.
 *
 * @module
 */

import type { OtlpEncoding } from "./decode.ts";
import { otlpProtoTypes } from "./_proto.ts";

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

/** A refusal as the server answers it: HTTP status, API error code and message. */
export interface OtlpRefusal {
  status: number;
  /** The JSON API's error code (`invalid_request`, `payload_too_large`, …). */
  code: string;
  message: string;
}

// The google.rpc.Code closest to each HTTP status the server answers with.
const RPC_CODE_BY_STATUS: Readonly<Record<number, number>> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  409: 6, // ALREADY_EXISTS
  413: 8, // RESOURCE_EXHAUSTED
  415: 3, // INVALID_ARGUMENT
  422: 9, // FAILED_PRECONDITION
  500: 13, // INTERNAL
  502: 14, // UNAVAILABLE
  503: 14, // UNAVAILABLE
};
const RPC_UNKNOWN = 2;

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
  refusal: OtlpRefusal,
): OtlpResponseBody {
  const code = RPC_CODE_BY_STATUS[refusal.status] ?? RPC_UNKNOWN;
  const { message } = refusal;
  const contentType = OTLP_CONTENT_TYPES[encoding];
  if (encoding === "json") {
    return {
      body: JSON.stringify({
        code,
        message,
        error: { code: refusal.code, message },
      }),
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

/**
 * The OTLP/HTTP trace receiver's domain half: decodes an
 * `ExportTraceServiceRequest` (JSON or protobuf) into spans, maps the spans
 * onto trace events following the GenAI and OpenInference conventions, and
 * builds the OTLP answer in the request's encoding. It writes nothing: the
 * caller hands the mapped events to `ingest/` as one batch.
 *
 * May import the root's event model and batch bounds (`../model.ts`,
 * `../batch.ts`), `lib/errors.ts`, `lib/issues.ts` and `lib/json/`; nothing
 * from the other pipelines.
 *
 * @module
 */

export {
  decodeOtlpTraces,
  OTLP_ENCODINGS,
  OTLP_LIMITS,
  type OtlpAttributes,
  type OtlpEncoding,
  type OtlpSpan,
  type OtlpSpanEvent,
  type OtlpValue,
} from "./decode.ts";
export {
  mapOtlpSpans,
  OPENINFERENCE_KINDS,
  OPERATION_KINDS,
  type OtlpMapping,
  type OtlpMappingOptions,
} from "./mapping.ts";
export {
  exportResponse,
  OTLP_CONTENT_TYPES,
  type OtlpPartialSuccess,
  type OtlpRefusal,
  type OtlpResponseBody,
  statusResponse,
} from "./response.ts";
export { OtlpRequestError } from "./error.ts";

/**
 * The OTLP/HTTP trace receiver's domain half: decodes an
 * `ExportTraceServiceRequest` (JSON or protobuf) into spans, gives each span
 * its tenant (`tenant.ts`), maps the spans onto trace events following the
 * producer conventions in `conventions/` (OpenTelemetry GenAI, the Vercel AI
 * SDK, OpenInference), and builds the OTLP answer in the request's encoding.
 * It writes nothing: the caller hands the mapped events to `ingest/` as one
 * batch.
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
  type Convention,
  CONVENTION_KINDS,
  CONVENTIONS,
  GENAI_CONVENTION,
  MAPPED_FIELDS,
  type MappedField,
  OPENINFERENCE_CONVENTION,
  OPENINFERENCE_KINDS,
  OPERATION_KINDS,
  VERCEL_AI_CONVENTION,
  VERCEL_AI_OPERATION_KINDS,
} from "./conventions/mod.ts";
export {
  mapOtlpSpans,
  NORMALIZED_ATTRIBUTES,
  type OtlpMapping,
  type OtlpMappingOptions,
} from "./mapping.ts";
export {
  type SpanTenant,
  TENANT_ATTRIBUTE_KEYS,
  TENANT_SOURCES,
  tenantForRequest,
  type TenantRequest,
  type TenantRule,
  type TenantSource,
} from "./tenant.ts";
export {
  exportResponse,
  OTLP_CONTENT_TYPES,
  type OtlpPartialSuccess,
  type OtlpRefusal,
  type OtlpResponseBody,
  statusResponse,
} from "./response.ts";
export { OtlpRequestError, OtlpTenantError } from "./error.ts";

/**
 * The part of the OTLP protocol definitions (opentelemetry-proto v1: common,
 * resource, trace, collector/trace) that trace ingest reads and answers with,
 * plus `google.rpc.Status` for error bodies. Field numbers and
 * types are those of the upstream `.proto` files; messages and fields not
 * listed here (entity refs, dropped counts, everything of a link but its
 * attributes) are skipped as unknown fields by the decoder, which protobuf
 * permits. Link attributes are decoded only to be checked like every other
 * attribute list.
 *
 * One deliberate difference: upstream, `AnyValue`'s value fields form a
 * `oneof`, and a oneof decoder keeps only the last member it meets, so a
 * value sent with two of them (which the OTLP data model forbids) would be
 * read as the last one, where the JSON decoder would see both. Here each
 * member is a field of its own (`optional`, so presence is kept as a
 * oneof's is). The wire format is the same (a oneof is only a rule about
 * its members, not an encoding), but every member sent is decoded, and
 * `decode.ts` refuses a value holding more than one, in both encodings
 * alike. A member repeated, or a message member sent in parts, still merges
 * as protobuf defines.
 *
 * @module
 */

import protobuf from "protobufjs";

const COMMON = `
syntax = "proto3";
package opentelemetry.proto.common.v1;

// Upstream these form "oneof value"; separate fields keep every member sent (see above).
message AnyValue {
  optional string string_value = 1;
  optional bool bool_value = 2;
  optional int64 int_value = 3;
  optional double double_value = 4;
  optional ArrayValue array_value = 5;
  optional KeyValueList kvlist_value = 6;
  optional bytes bytes_value = 7;
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue {
  string key = 1;
  AnyValue value = 2;
}
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
`;

const RESOURCE = `
syntax = "proto3";
package opentelemetry.proto.resource.v1;

message Resource {
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}
`;

const TRACE = `
syntax = "proto3";
package opentelemetry.proto.trace.v1;

message ResourceSpans {
  opentelemetry.proto.resource.v1.Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
}
message ScopeSpans {
  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  enum SpanKind {
    SPAN_KIND_UNSPECIFIED = 0;
    SPAN_KIND_INTERNAL = 1;
    SPAN_KIND_SERVER = 2;
    SPAN_KIND_CLIENT = 3;
    SPAN_KIND_PRODUCER = 4;
    SPAN_KIND_CONSUMER = 5;
  }
  SpanKind kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated opentelemetry.proto.common.v1.KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  // Only the attributes: the receiver checks them and keeps nothing of a link.
  message Link {
    repeated opentelemetry.proto.common.v1.KeyValue attributes = 4;
  }
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
}
message Status {
  string message = 2;
  enum StatusCode {
    STATUS_CODE_UNSET = 0;
    STATUS_CODE_OK = 1;
    STATUS_CODE_ERROR = 2;
  }
  StatusCode code = 3;
}
`;

const COLLECTOR = `
syntax = "proto3";
package opentelemetry.proto.collector.trace.v1;

message ExportTraceServiceRequest {
  repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 1;
}
message ExportTraceServiceResponse {
  ExportTracePartialSuccess partial_success = 1;
}
message ExportTracePartialSuccess {
  int64 rejected_spans = 1;
  string error_message = 2;
}
`;

const RPC_STATUS = `
syntax = "proto3";
package google.rpc;

message Status {
  int32 code = 1;
  string message = 2;
}
`;

/** The message types trace ingest uses, resolved once. */
export interface OtlpProtoTypes {
  request: protobuf.Type;
  response: protobuf.Type;
  status: protobuf.Type;
}

let types: OtlpProtoTypes | undefined;

/** The OTLP/JSON name of a field of these definitions (`scope_spans` → `scopeSpans`). */
export function jsonName(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Loads the trace protocol types (parsed once per process). */
export function otlpProtoTypes(): OtlpProtoTypes {
  if (types) return types;
  // keepCase: decoded objects use the snake_case names of the .proto files.
  const root = new protobuf.Root();
  for (const source of [COMMON, RESOURCE, TRACE, COLLECTOR, RPC_STATUS]) {
    protobuf.parse(source, root, { keepCase: true });
  }
  root.resolveAll();
  types = {
    request: root.lookupType(
      "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
    ),
    response: root.lookupType(
      "opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse",
    ),
    status: root.lookupType("google.rpc.Status"),
  };
  return types;
}

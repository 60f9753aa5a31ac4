/**
 * Finds the string field of a protobuf OTLP request that is not valid
 * UTF-8, to name it in the refusal. protobufjs refuses such a body with the
 * text decoder's own message, which names no field and reads as if the body
 * were no protobuf at all. This walk runs only after the decoder has
 * refused a body, so accepted requests never pay for it: it follows the
 * fields the decoder reads (the types of `_proto.ts`, by reflection) and
 * checks each string field's bytes as the decoder would.
 *
 * @module
 */

import type protobuf from "protobufjs";
import { eachField } from "./_bounds.ts";
import { jsonName } from "./_proto.ts";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The OTLP/JSON path of the first string field of `bytes` (a message of
 * `type`) whose bytes are not UTF-8, such as
 * `resourceSpans[0].scopeSpans[0].spans[2].name`; `null` when every string
 * the decoder reads is UTF-8 or the wire format cannot be walked.
 */
export function invalidUtf8Field(
  bytes: Uint8Array,
  type: protobuf.Type,
): string | null {
  try {
    return firstInvalid(bytes, 0, bytes.length, type, "");
  } catch {
    // Wire data the walk cannot follow: the decoder's own message stands.
    return null;
  }
}

function firstInvalid(
  bytes: Uint8Array,
  start: number,
  end: number,
  type: protobuf.Type,
  path: string,
): string | null {
  const seen = new Map<number, number>();
  let found: string | null = null;
  eachField(bytes, start, end, (id, s, e) => {
    if (found !== null) return;
    const field = type.fieldsById[id];
    if (!field) return;
    const index = seen.get(id) ?? 0;
    seen.set(id, index + 1);
    const at = `${path === "" ? "" : `${path}.`}${jsonName(field.name)}${
      field.repeated ? `[${index}]` : ""
    }`;
    if (field.type === "string") {
      if (!isUtf8(bytes.subarray(s, e))) found = at;
    } else if (field.resolvedType && "fieldsById" in field.resolvedType) {
      found = firstInvalid(bytes, s, e, field.resolvedType, at);
    }
  });
  return found;
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

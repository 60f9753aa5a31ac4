/**
 * The preview built from a span's content attributes (prompts, completions,
 * messages, tool arguments and results, retrieved or remembered text), as
 * each convention's table (`conventions/`) lists them. Content only ever
 * reaches an event's `preview`; the mapping keeps it out of ids, resources
 * and attributes, and embedding vectors reach neither.
 *
 * @module
 */

import { LIMITS, sliceWellFormed } from "../model.ts";
import { isContentKey } from "./conventions/mod.ts";
import type { OtlpSpan, OtlpValue } from "./decode.ts";

/** The span's content as one text (null when it has none), cut just past the preview limit. */
export function spanPreview(span: OtlpSpan): string | null {
  // One character past the limit, so ingest still records the preview as truncated.
  const budget = LIMITS.previewChars + 1;
  const parts: string[] = [];
  let length = 0;
  const add = (label: string, value: OtlpValue) => {
    if (length >= budget) return;
    const part = `${label}: ${asText(value)}`;
    parts.push(part);
    length += part.length + 2;
  };
  for (const [key, value] of span.attributes) {
    if (isContentKey(key)) add(key, value);
  }
  for (const event of span.events) {
    for (const [key, value] of event.attributes) {
      if (isContentKey(key)) add(`${event.name} ${key}`, value);
    }
  }
  if (parts.length === 0) return null;
  return sliceWellFormed(parts.join("\n\n"), budget);
}

function asText(value: OtlpValue): string {
  if (typeof value === "string") return value;
  // NaN and the infinities by name, as the stored attributes write them (JSON would say null).
  if (typeof value === "number") return String(value);
  return JSON.stringify(
    value,
    (_key, item) =>
      item instanceof Uint8Array
        ? `<${item.byteLength} bytes>`
        : typeof item === "number" && !Number.isFinite(item)
        ? String(item)
        : item,
  );
}

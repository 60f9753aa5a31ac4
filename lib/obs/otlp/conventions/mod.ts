/**
 * The producer conventions the OTLP receiver understands, one table per file
 * (`genai.ts`, `vercel_ai.ts`, `openinference.ts`), and the one precedence
 * rule that applies when a span carries several:
 *
 * **GenAI, then the Vercel AI SDK, then OpenInference; span attributes before
 * the resource's.** For each field (kind, agent, thread, user, tool, model,
 * usage, …) the first convention in that order with a non-empty value
 * decides, looking at the span's own attributes first and at its resource's
 * only when no convention's span attribute has one. The open standard comes
 * first because a producer that writes it chose it; the AI SDK's own
 * attributes come before OpenInference's because, on the same span, these
 * are usually added afterwards by a converting span processor and say less
 * (it maps both the SDK call and its model request to `LLM`/`AGENT`).
 *
 * @module
 */

import { type OtlpAttributes, type OtlpSpan, scalarText } from "../decode.ts";
import type { Convention, MappedField } from "./_table.ts";
import { GENAI_CONVENTION } from "./genai.ts";
import { OPENINFERENCE_CONVENTION } from "./openinference.ts";
import { VERCEL_AI_CONVENTION } from "./vercel_ai.ts";

export { type Convention, MAPPED_FIELDS, type MappedField } from "./_table.ts";
export { GENAI_CONVENTION, OPERATION_KINDS } from "./genai.ts";
export {
  OPENINFERENCE_CONVENTION,
  OPENINFERENCE_KINDS,
} from "./openinference.ts";
export {
  VERCEL_AI_CONVENTION,
  VERCEL_AI_OPERATION_KINDS,
} from "./vercel_ai.ts";

/** Every convention, in precedence order (first wins). */
export const CONVENTIONS: readonly Convention[] = [
  GENAI_CONVENTION,
  VERCEL_AI_CONVENTION,
  OPENINFERENCE_CONVENTION,
];

/** Kind for spans that say nothing about what they did. */
export const DEFAULT_KIND = "span";

/** Every kind a convention maps an operation to, and {@link DEFAULT_KIND}, sorted. */
export const CONVENTION_KINDS: readonly string[] = [
  ...new Set([
    ...CONVENTIONS.flatMap(({ kind }) => Object.values(kind.kinds)),
    DEFAULT_KIND,
  ]),
].sort();

/** The event kind of a span: the first convention naming an operation decides. */
export function conventionKind(attributes: OtlpAttributes): string {
  for (const { kind } of CONVENTIONS) {
    const value = attributes.get(kind.key);
    if (typeof value !== "string" || value === "") continue;
    const name = kind.upperCase ? value.toUpperCase() : value;
    // An unknown name is kept as the kind when it already is a valid token.
    return kind.kinds[name] ?? asToken(value) ?? DEFAULT_KIND;
  }
  return DEFAULT_KIND;
}

function asToken(name: string): string | null {
  const token = name.toLowerCase();
  return /^[a-z][a-z0-9_.:-]{0,63}$/.test(token) ? token : null;
}

/** A field as text (strings, finite numbers, string arrays joined), or null. */
export function conventionText(
  span: OtlpSpan,
  field: MappedField,
): string | null {
  return firstValue(span, field, asText);
}

/** A field as a non-negative whole number (numeric strings accepted), or null. */
export function conventionCount(
  span: OtlpSpan,
  field: MappedField,
): number | null {
  return firstValue(span, field, asCount);
}

function firstValue<T>(
  span: OtlpSpan,
  field: MappedField,
  convert: (value: unknown) => T | null,
): T | null {
  for (const attributes of [span.attributes, span.resource]) {
    for (const convention of CONVENTIONS) {
      for (const key of convention.fields[field] ?? []) {
        const value = convert(attributes.get(key));
        if (value !== null) return value;
      }
    }
  }
  return null;
}

function asText(value: unknown): string | null {
  if (typeof value === "string" || typeof value === "number") {
    return scalarText(value) || null;
  }
  if (
    Array.isArray(value) && value.length > 0 &&
    value.every((item) => typeof item === "string" && item !== "")
  ) return value.join(",");
  return null;
}

function asCount(value: unknown): number | null {
  const number = typeof value === "string" && /^\d{1,15}$/.test(value)
    ? Number(value)
    : value;
  return typeof number === "number" && Number.isSafeInteger(number) &&
      number >= 0
    ? number
    : null;
}

const CONTENT_KEYS: ReadonlySet<string> = new Set(
  CONVENTIONS.flatMap((convention) => convention.content),
);
const CONTENT_PATTERNS = CONVENTIONS.flatMap((c) => c.contentPatterns);

/** True when the attribute `key` carries content that belongs in the preview. */
export function isContentKey(key: string): boolean {
  return CONTENT_KEYS.has(key) ||
    CONTENT_PATTERNS.some((pattern) => pattern.test(key));
}

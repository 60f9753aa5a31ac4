/**
 * Which span attributes are content (prompts, completions, messages, tool
 * arguments and results, retrieved or remembered text) and the preview built
 * from them. Content only ever reaches an event's `preview`; the mapping
 * keeps it out of ids, resources and attributes.
 *
 * @module
 */

import { LIMITS, sliceWellFormed } from "../model.ts";
import type { OtlpSpan, OtlpValue } from "./decode.ts";

/** Content attributes of the GenAI semantic conventions and OpenInference. */
export const CONTENT_ATTRIBUTE_KEYS = [
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.system_instructions",
  "gen_ai.tool.definitions",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
  "gen_ai.retrieval.query.text",
  "gen_ai.retrieval.documents",
  "gen_ai.memory.query.text",
  "gen_ai.memory.records",
  "gen_ai.memory.record.content",
  "gen_ai.memory.content",
  "gen_ai.prompt",
  "gen_ai.completion",
  "input.value",
  "output.value",
  "llm.prompts",
  "tool.parameters",
  "tool_call.function.arguments",
  "message.content",
] as const;

const CONTENT_KEYS: ReadonlySet<string> = new Set(CONTENT_ATTRIBUTE_KEYS);

/** Flattened (indexed) content attributes, e.g. `llm.input_messages.0.message.content`. */
const CONTENT_PATTERNS: readonly RegExp[] = [
  /^gen_ai\.(prompt|completion)\.\d+\./,
  /^llm\.(input|output)_messages\./,
  /^llm\.prompt_template\./,
  /^llm\.tools\./,
  /^(retrieval\.documents|reranker\.(input|output)_documents)\.\d+\.document\.(content|metadata)$/,
  /^reranker\.query$/,
  /^embedding\.embeddings\.\d+\.embedding\.text$/,
];

/** True when the attribute `key` carries content rather than metadata. */
export function isContentKey(key: string): boolean {
  return CONTENT_KEYS.has(key) ||
    CONTENT_PATTERNS.some((pattern) => pattern.test(key));
}

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
  return JSON.stringify(
    value,
    (_key, item) =>
      item instanceof Uint8Array ? `<${item.byteLength} bytes>` : item,
  );
}

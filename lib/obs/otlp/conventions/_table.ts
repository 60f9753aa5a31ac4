/**
 * The shape every convention table has: which attribute names the
 * operation (and the event kind of each value), which attributes fill each
 * mapped field, and which attributes are content.
 *
 * @module
 */

/** Event fields (and normalised attributes) a convention can fill. */
export const MAPPED_FIELDS = [
  "tenant",
  "agent",
  "memory",
  "thread",
  "user",
  "tool",
  "tool_call_id",
  "request_model",
  "response_model",
  "provider",
  "input_tokens",
  "output_tokens",
  "finish_reasons",
] as const;
/** One of {@link MAPPED_FIELDS}. */
export type MappedField = typeof MAPPED_FIELDS[number];

/** One producer convention, as a table. */
export interface Convention {
  /** Its name in the docs. */
  name: string;
  /** The attribute naming what the span did, and the event kind of each value. */
  kind: {
    key: string;
    kinds: Readonly<Record<string, string>>;
    /** Values are compared upper-cased (OpenInference writes `LLM`, `RETRIEVER`, …). */
    upperCase?: boolean;
  };
  /** Attribute keys that fill each field, the first present winning. */
  fields: Readonly<Partial<Record<MappedField, readonly string[]>>>;
  /** Attributes that hold content: never metadata, copied into the preview. */
  content: readonly string[];
  /** Flattened (indexed) content attributes, as patterns. */
  contentPatterns: readonly RegExp[];
  /** Content too large and unreadable for a preview (embedding vectors): dropped. */
  withheld: readonly RegExp[];
}

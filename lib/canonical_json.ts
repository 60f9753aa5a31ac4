/**
 * Canonical JSON (sorted keys, no whitespace) and SHA-256 digests over it.
 * Written here because digests must not depend on key insertion order, which
 * `JSON.stringify` preserves.
 *
 * @module
 */

import { createHash } from "node:crypto";

/** Serialises `value` with object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) {
      throw new TypeError("Cannot canonicalise a non-finite number");
    }
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${
    entries.map(([key, item]) =>
      `${JSON.stringify(key)}:${canonicalJson(item)}`
    ).join(",")
  }}`;
}

/** Lower-case hex SHA-256 of a UTF-8 string (synchronous: it sits on ingest hot paths). */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** `sha256:<hex>` of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

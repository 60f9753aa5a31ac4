/**
 * A JSON value's kind, for the refusals both MCP transports and the
 * tool-call guard make before the SDK sees a message.
 *
 * @module
 */

/** A value's kind for a message, never the value itself. */
export function kindOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Lists as sentences say them: findings, cleanup problems, page notices. */

/** `a`, `a and b`, `a, b and c`. */
export function joinAnd(parts: readonly string[]): string {
  if (parts.length <= 1) return parts[0] ?? "";
  return `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

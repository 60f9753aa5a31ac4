/** Pieces of regular expressions built from text. */

/** `text` as a pattern that matches exactly it (outside a character class). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

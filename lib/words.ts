/** Lists as sentences say them: findings, cleanup problems, page notices. */

/** `a`, `a and b`, `a, b and c`. */
export function joinAnd(parts: readonly string[]): string {
  if (parts.length <= 1) return parts[0] ?? "";
  return `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

/** `text` with its first letter in upper case: a clause made the start of a sentence. */
export function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `message` as the rest of a sentence: its first word in lower case (unless an acronym), one full stop. */
export function continuedSentence(message: string): string {
  const text = message.replace(/\.$/, "");
  const lowered = /^[A-Z][a-z]/.test(text)
    ? text[0]!.toLowerCase() + text.slice(1)
    : text;
  return `${lowered}.`;
}

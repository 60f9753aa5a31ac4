/** Shell words for the commands Trace prints (light: no run machinery). */

import { terminalSafe } from "./display.ts";

/**
 * Quotes one shell word when it needs quoting. A word with a character a
 * terminal would act on (an ESC, a bidi override) is written in `$'…'`
 * quoting with that character as an escape: the printed command shows no
 * raw control and still runs as typed in bash or zsh.
 */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_./:@=+-]+$/.test(word)) return word;
  if (terminalSafe(word) !== word) return ansiCQuoted(word);
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `word` in `$'…'` quoting, each character a terminal would act on as `\u`/`\U` code. */
function ansiCQuoted(word: string): string {
  let quoted = "";
  for (const char of word) {
    if (char === "\\" || char === "'") quoted += `\\${char}`;
    else if (terminalSafe(char) === char) quoted += char;
    else {
      const code = char.codePointAt(0)!;
      quoted += code > 0xffff
        ? `\\U${code.toString(16).padStart(8, "0")}`
        : `\\u${code.toString(16).padStart(4, "0")}`;
    }
  }
  return `$'${quoted}'`;
}

/**
 * Stored text as a page shows it: control, bidi formatting and zero-width
 * characters each appear as a marked escape (`\u{202e}`) instead of acting
 * on the text around them, so `abc\u202Egnp.exe` cannot display as
 * `abc…exe.png` and `a\u200Bb` cannot pass for `ab`. Whatever a producer
 * supplied goes through it: ids, kinds, stages, tools, refs, reasons,
 * attribute keys and values, model names, revealed previews, and the
 * sentences and labels that name them (the characters are cut by
 * `displayParts` in lib/display.ts, which the terminal views share). Link
 * targets, form values and copy payloads keep the value as stored.
 * A `<title>`, an `aria-label` or a tooltip cannot hold markup: they take
 * {@link shownString}, the same escapes as plain text.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { displayParts } from "../../../lib/display.ts";

/** `text` with its invisible and control characters shown as marked escapes. */
export const Shown: FC<{
  text: string;
  /** Keep line feeds and tabs (a preview shown in a `<pre>`). */
  multiline?: boolean;
}> = ({ text, multiline }) => shownText(text, multiline ?? false);

/** Stored text in monospace, its invisible and control characters shown as escapes. */
export const ShownCode: FC<{ text: string }> = ({ text }) => (
  <code>
    <Shown text={text} />
  </code>
);

/**
 * `text` as {@link Shown} writes it, in one plain string: for a `<title>` or
 * an attribute a person reads (label, tooltip), where a raw U+202E would
 * reorder a tab title and a U+200B make one id pass for another. Unlike the
 * terminal's form a backslash stays as it is, so the two read alike.
 */
export function shownString(text: string): string {
  return displayParts(text).map((part) => part.text).join("");
}

/**
 * `child` with a plain string shown as {@link Shown} shows it, anything else
 * as given: for the text props of shared components (an intro, a hint, a
 * cell), which pages often fill with a sentence that names an id.
 */
export function shownChild(child: Child): Child {
  return typeof child === "string" ? shownText(child) : child;
}

/** {@link Shown} as a function, for cells and props that take a child. */
function shownText(text: string, multiline = false): Child {
  const parts = displayParts(text, { multiline });
  if (parts.every((part) => !part.escaped)) return text;
  return parts.map((part) =>
    part.escaped
      ? (
        <span
          class="esc"
          title={`Character U+${
            part.text.slice(3, -1).toUpperCase()
          }, shown as its code`}
        >
          {part.text}
        </span>
      )
      : part.text
  );
}

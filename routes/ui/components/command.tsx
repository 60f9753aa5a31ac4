/**
 * A shell command to run, in monospace with a copy button (shown by the
 * browser script).
 *
 * @module
 */

import type { FC } from "hono/jsx";

/** `text` as a command block with a copy button. */
export const Command: FC<{ text: string }> = ({ text }) => (
  <div class="command-box">
    <pre class="command"><code>{text}</code></pre>
    <button
      type="button"
      class="copy-button"
      data-copy={text}
      aria-label="Copy the command"
      hidden
    >
      Copy
    </button>
  </div>
);

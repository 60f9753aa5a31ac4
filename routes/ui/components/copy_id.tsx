/**
 * An id in monospace with a copy button. The button is rendered hidden and
 * shown by the browser script, so a page without JavaScript shows no dead
 * control; the id itself stays selectable. The button copies the id as
 * stored; its label reads it as the page shows it.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import { ShownCode, shownString } from "./shown_text.tsx";

/** `value` in monospace, with a copy button labelled for screen readers. */
export const CopyId: FC<{ value: string; label?: string }> = (
  { value, label = "id" },
) => (
  <span class="copy-id">
    <ShownCode text={value} />
    <button
      type="button"
      class="copy-button"
      data-copy={value}
      aria-label={`Copy ${label} ${shownString(value)}`}
      hidden
    >
      Copy
    </button>
  </span>
);

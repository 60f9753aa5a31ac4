/**
 * The page's data as JSON, collapsed at the bottom: for the curious and for
 * bug reports. The same data is at the page's JSON twin.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import { visibleJson } from "../../../lib/display.ts";

/**
 * `value` pretty-printed in a closed `<details>`, with a link to the twin;
 * bidi, zero-width and control characters of stored strings are escaped.
 */
export const RawJson: FC<{ value: unknown; href?: string }> = (
  { value, href },
) => (
  <details class="raw">
    <summary>Raw JSON</summary>
    {href
      ? (
        <p class="meta">
          The same data is served at <a href={href}>{href}</a>.
        </p>
      )
      : null}
    <pre><code>{visibleJson(JSON.stringify(value, null, 2))}</code></pre>
  </details>
);

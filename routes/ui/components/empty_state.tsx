/**
 * What an empty list or panel says: what would fill it, and the command or
 * field that does.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { Shown, shownChild } from "./shown_text.tsx";

/** An explained empty state, with an optional command to run. */
export const EmptyState: FC<
  { title: string; children?: Child; command?: string | undefined }
> = ({ title, children, command }) => (
  <div class="empty" role="status">
    <p class="empty__title">
      <Shown text={title} />
    </p>
    {children ? <p>{shownChild(children)}</p> : null}
    {command ? <pre><code>{command}</code></pre> : null}
  </div>
);

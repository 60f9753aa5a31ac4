/**
 * A point in time: relative to when the page was rendered ("3 min ago"),
 * with the absolute time in UTC on hover and in the machine-readable
 * `datetime`.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import { formatRelative, formatUtc } from "../format.ts";

/** `<time>` for `iso`, or `empty` (default "never") when there is none. */
export const Time: FC<{ iso: string | null; now: number; empty?: string }> = (
  { iso, now, empty = "never" },
) =>
  iso === null
    ? <span class="meta">{empty}</span>
    : (
      <time datetime={iso} title={formatUtc(iso)}>
        {formatRelative(iso, now)}
      </time>
    );

/**
 * Counts and durations: tabular figures, right-aligned in tables, always
 * with a unit for durations.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { formatCount, formatDuration } from "../format.ts";

/** A count with thousands separators (`unknown` for `null`). */
export const Count: FC<{ n: number | null }> = ({ n }) => (
  <span class="num">{formatCount(n)}</span>
);

/** A duration in milliseconds, with its unit. */
export const Duration: FC<{ ms: number }> = ({ ms }) => (
  <span class="num">{formatDuration(ms)}</span>
);

/** A right-aligned numeric table cell. */
export const NumCell: FC<{ children?: Child }> = ({ children }) => (
  <td class="num">{children}</td>
);

/** A table cell holding a count. */
export const CountCell: FC<{ n: number | null }> = ({ n }) => (
  <td class="num">{formatCount(n)}</td>
);

/** A table cell holding a duration in milliseconds. */
export const DurationCell: FC<{ ms: number }> = ({ ms }) => (
  <td class="num">{formatDuration(ms)}</td>
);

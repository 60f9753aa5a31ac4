/**
 * Words and numbers as the pages show them: counts with separators,
 * durations with a unit, times relative to now and absolute in UTC.
 * Pure functions, so the JSON twins keep raw values and only pages format.
 *
 * @module
 */

const COUNT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** `1234567` → `1,234,567`; `null` → `unknown`. */
export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? "unknown" : COUNT.format(n);
}

/** Milliseconds with a unit: `0.42 ms`, `12.3 ms`, `4.2 s`, `3 min 12 s`, `2 h 5 min`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "unknown";
  const abs = Math.abs(ms);
  if (abs < 1) return `${round(ms, 2)} ms`;
  if (abs < 100) return `${round(ms, 1)} ms`;
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${round(ms / 1000, abs < 10_000 ? 2 : 1)} s`;
  const totalSeconds = Math.round(abs / 1000);
  const sign = ms < 0 ? "-" : "";
  if (totalSeconds < 3600) {
    return `${sign}${Math.floor(totalSeconds / 60)} min ${totalSeconds % 60} s`;
  }
  const minutes = Math.round(totalSeconds / 60);
  return `${sign}${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function round(value: number, digits: number): string {
  return String(Number(value.toFixed(digits)));
}

/** An ISO time as shown on hover: `2026-11-29 10:00:00 UTC`. */
export function formatUtc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, " UTC");
}

const UNITS: [limit: number, size: number, unit: string][] = [
  [60, 1, "s"],
  [3600, 60, "min"],
  [86_400, 3600, "h"],
  [30 * 86_400, 86_400, "d"],
  [365 * 86_400, 30 * 86_400, "mo"],
  [Infinity, 365 * 86_400, "y"],
];

/** How long ago (or until) `iso` is from `now`: `just now`, `3 min ago`, `in 2 h`. */
export function formatRelative(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.round((now - at) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 5) return "just now";
  for (const [limit, size, unit] of UNITS) {
    if (abs < limit) {
      const amount = `${Math.floor(abs / size)} ${unit}`;
      return seconds >= 0 ? `${amount} ago` : `in ${amount}`;
    }
  }
  return iso;
}

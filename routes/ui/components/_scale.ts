/**
 * Axis arithmetic for the SVG charts: round tick values on a linear axis
 * and on a time axis (UTC), and mapping values to pixels.
 *
 * @module
 */

/** A linear map from a domain to a pixel range. */
export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (value) => r0 + ((value - d0) / span) * (r1 - r0);
}

/** About `count` round tick values covering `[min, max]` (1, 2, 2.5 or 5 × 10^n apart). */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) max = min + 1;
  const raw = (max - min) / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude)
    .find((s) => s >= raw) ?? raw;
  const start = Math.floor(min / step) * step;
  const ticks: number[] = [];
  // Up to the first tick at or above max, so the axis covers every value.
  for (let i = 0; i < 1000; i++) {
    const value = Number((start + i * step).toPrecision(12));
    ticks.push(value);
    if (value >= max) break;
  }
  return ticks;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TIME_STEPS = [
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
];

/** Tick times (epoch ms, UTC-aligned) within `[t0, t1]`, with labels. */
export function timeTicks(
  t0: number,
  t1: number,
  count = 6,
): { t: number; label: string }[] {
  const span = Math.max(t1 - t0, SECOND);
  const step = TIME_STEPS.find((s) => s >= span / count) ??
    Math.ceil(span / count / DAY) * DAY;
  const ticks: { t: number; label: string }[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    ticks.push({ t, label: timeLabel(t, step) });
  }
  return ticks;
}

function timeLabel(t: number, step: number): string {
  const iso = new Date(t).toISOString();
  if (step < MINUTE) return iso.slice(11, 19);
  if (step < DAY) return iso.slice(11, 16);
  return iso.slice(5, 10);
}

/** A tick value as a short label (`1.5`, `250`, `12k`). */
export function tickLabel(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (abs >= 1e4) return `${Number((value / 1e3).toPrecision(3))}k`;
  return String(Number(value.toPrecision(3)));
}

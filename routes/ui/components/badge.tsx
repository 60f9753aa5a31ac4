/**
 * Status badges: the status as a word in a tinted, bordered pill. The word
 * carries the meaning; the tone only repeats it, so nothing depends on
 * telling colours apart.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import { Shown } from "./shown_text.tsx";

/** Colour tones of badges and verdict banners (CSS `badge--<tone>`). */
export const TONES = [
  "success",
  "danger",
  "attention",
  "accent",
  "done",
  "neutral",
] as const;
/** One of {@link TONES}. */
export type Tone = typeof TONES[number];

/** The tone of each status word the UI shows (lower case). */
export const TONE_BY_STATUS: Readonly<Record<string, Tone>> = {
  // Run verdicts and states.
  pass: "success",
  fail: "danger",
  inconclusive: "attention",
  running: "accent",
  interrupted: "done",
  // Health statuses and alert severities.
  ok: "success",
  degraded: "attention",
  failing: "danger",
  unknown: "neutral",
  critical: "danger",
  warning: "attention",
  info: "accent",
  // Checks.
  match: "success",
  mismatch: "danger",
  incomplete: "attention",
  ready: "success",
  missing: "danger",
  // Findings, cleanup and regressions.
  transient: "attention",
  note: "neutral",
  complete: "success",
  pending: "attention",
  enforced: "success",
  fixed: "success",
  // A later cleanup's inventories read 0, retrieval unchecked: not a verified clean.
  "inventories clear": "neutral",
  // Trace events and evidence facts.
  error: "danger",
  unset: "neutral",
  partial: "attention",
  untrusted: "danger",
  recorded: "accent",
  selected: "accent",
  kept: "success",
  dropped: "neutral",
  problem: "danger",
  identical: "success",
  different: "attention",
};

/** The tone of `status` (neutral for a word without one). */
export function toneOf(status: string): Tone {
  return TONE_BY_STATUS[status.toLowerCase()] ?? "neutral";
}

/** A status word as a badge, e.g. PASS, FAIL, DEGRADED. */
export const StatusBadge: FC<{ status: string; size?: "lg" }> = (
  { status, size },
) => (
  <span
    class={`badge badge--${toneOf(status)}${size === "lg" ? " badge--lg" : ""}`}
  >
    <Shown text={status.toUpperCase()} />
  </span>
);

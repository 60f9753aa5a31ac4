/**
 * One finding as the verdict rules word it, and the one way they write a
 * time. Every rule module builds its findings here, so a finding's shape and
 * a report's seconds read the same whichever rule emitted them.
 *
 * @module
 */

import type { FindingCode } from "./rules.ts";
import type { Finding } from "./report.ts";

/** A finding with the samples it rests on. */
export function finding(
  severity: Finding["severity"],
  code: FindingCode,
  subject: string,
  message: string,
  sampleIndexes: number[],
): Finding {
  return { severity, code, subject, message, sample_indexes: sampleIndexes };
}

/** Seconds formatted as in reports: two decimals. */
export function secondsLabel(seconds: number): string {
  return `${seconds.toFixed(2)} s`;
}

/**
 * One finding as the verdict rules word it, and the one way they write a
 * time. Every rule module builds its findings here, so a finding's shape and
 * a report's seconds read the same whichever rule emitted them.
 *
 * @module
 */

import type { FindingCode } from "./rules.ts";
import type { Finding } from "./report.ts";

/** What a finding says, and the samples it rests on. */
export interface FindingParts {
  severity: Finding["severity"];
  code: FindingCode;
  subject: string;
  message: string;
  /** Indexes of the samples the finding rests on (`[]` for none). */
  samples: number[];
}

/** A finding as reports carry it. */
export function finding(parts: FindingParts): Finding {
  const { severity, code, subject, message, samples } = parts;
  return { severity, code, subject, message, sample_indexes: samples };
}

/** Seconds formatted as in reports: two decimals. */
export function secondsLabel(seconds: number): string {
  return `${seconds.toFixed(2)} s`;
}

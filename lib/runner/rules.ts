/**
 * The rules revision and what it covers: every finding code the verdict rules
 * (`findings.ts`, and the engine's own checkpoint note) can emit, with the
 * severities and subjects each may carry, and the assertion families those
 * subjects fall in (`families.ts`). Regressions and comparisons pin the
 * revision, so a change to any of these must come with a new revision; the
 * pinned digest below makes a test fail when it does not.
 *
 * @module
 */

import { digestOf } from "../canonical_json.ts";
import { STORES } from "../contract/protocol.ts";
import { ASSERTION_FAMILIES, familiesOf } from "./families.ts";
import type { FindingSeverity } from "./report.ts";

/** Revision of the verdict rules, finding codes and families that assertions refer to. */
export const ASSERTION_RULES_REVISION = "trace-assertions/1" as const;

/**
 * Digest of {@link rulesCatalogue} under {@link ASSERTION_RULES_REVISION}.
 * Changing a code, a severity, a subject or a family changes it: bump the
 * revision, then pin the new digest here.
 */
export const ASSERTION_RULES_DIGEST =
  "sha256:fb68b52db81e3db739a2ec4d45dcfb9d00e5765d1fb69519c2c536b6a6bfe52c" as const;

/** What one finding code may carry. */
export interface FindingRule {
  severities: readonly FindingSeverity[];
  subjects: readonly string[];
}

/** Every finding code a run can produce, with its severities and subjects. */
export const FINDING_CODES = {
  baseline_failed: { severities: ["inconclusive"], subjects: ["baseline"] },
  delete_unacknowledged: {
    severities: ["inconclusive"],
    subjects: ["deletion"],
  },
  marker_retrievable: { severities: ["fail"], subjects: ["retrieval"] },
  residual_store: { severities: ["fail"], subjects: STORES },
  transient_residual: {
    severities: ["transient"],
    subjects: ["retrieval", ...STORES],
  },
  request_error: { severities: ["inconclusive"], subjects: ["observation"] },
  inventory_incomplete: {
    severities: ["inconclusive"],
    subjects: ["inventory"],
  },
  control_inventory_incomplete: {
    severities: ["inconclusive"],
    subjects: ["control"],
  },
  control_lost: { severities: ["inconclusive"], subjects: ["control"] },
  interrupted: { severities: ["inconclusive"], subjects: ["window"] },
  cleanup_incomplete: {
    severities: ["inconclusive", "note"],
    subjects: ["cleanup"],
  },
  erased: { severities: ["note"], subjects: ["deletion"] },
  checkpoint_unwritten: { severities: ["note"], subjects: ["checkpoint"] },
} as const satisfies Record<string, FindingRule>;

/** One of the keys of {@link FINDING_CODES}. */
export type FindingCode = keyof typeof FINDING_CODES;

/** The codes, severities, subjects and families the revision covers, in a stable order. */
export function rulesCatalogue(): {
  codes: { code: string; severities: string[]; subjects: string[] }[];
  families: string[];
  subject_families: Record<string, string[]>;
} {
  const codes = Object.entries(FINDING_CODES as Record<string, FindingRule>)
    .map(([code, rule]) => ({
      code,
      severities: [...rule.severities].sort(),
      subjects: [...rule.subjects].sort(),
    }))
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  const subjects = [...new Set(codes.flatMap((c) => c.subjects))].sort();
  return {
    codes,
    families: [...ASSERTION_FAMILIES],
    subject_families: Object.fromEntries(
      subjects.map((subject) => [subject, [...familiesOf(subject)]]),
    ),
  };
}

/** The digest of {@link rulesCatalogue} as this build computes it. */
export function rulesDigest(): string {
  return digestOf(rulesCatalogue());
}

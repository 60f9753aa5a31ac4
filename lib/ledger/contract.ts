/**
 * The assertion contract a run was judged under: protocol revision, timing,
 * document count and the assertion rules. Two runs are comparable, and a
 * regression replayable, only under the same contract.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import {
  type Operation,
  OPERATIONS,
  PROTOCOL_REVISION,
} from "../contract/protocol.ts";
import { ASSERTION_FAMILIES, familiesOf } from "../runner/families.ts";
import type { RunReport, Timing } from "../runner/report.ts";
import { ASSERTION_RULES_REVISION } from "../runner/rules.ts";
import { configDifferences } from "./targets.ts";

/** What a run was judged against. */
export interface RunContract {
  protocol_revision: string;
  operations: Operation[];
  document_count: number;
  deletion_window_seconds: number;
  sample_interval_seconds: number;
  timeout_seconds: Timing["timeout_seconds"];
  assertion_rules: string;
  families: string[];
}

/** One failed assertion a regression pins: a finding code on a subject. */
export interface PinnedAssertion {
  code: string;
  subject: string;
  families: string[];
}

/** The contract of a report. */
export function runContract(report: RunReport): RunContract {
  const t = report.timing;
  return {
    protocol_revision: report.protocol.revision,
    operations: [...report.protocol.operations],
    document_count: t.document_count,
    deletion_window_seconds: t.deletion_window_seconds,
    sample_interval_seconds: t.sample_interval_seconds,
    timeout_seconds: { ...t.timeout_seconds },
    assertion_rules: ASSERTION_RULES_REVISION,
    families: [...ASSERTION_FAMILIES],
  };
}

/** Dotted names of the contract fields that differ. */
export function contractDifferences(a: RunContract, b: RunContract): string[] {
  return configDifferences(a, b);
}

/** The failing findings of a report as pinned assertions, sorted and unique. */
export function failedAssertions(report: RunReport): PinnedAssertion[] {
  const seen = new Map<string, PinnedAssertion>();
  for (const finding of report.findings) {
    if (finding.severity !== "fail") continue;
    seen.set(`${finding.code}:${finding.subject}`, {
      code: finding.code,
      subject: finding.subject,
      families: [...familiesOf(finding.subject)],
    });
  }
  return [...seen.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    .map(([, assertion]) => assertion);
}

/** The contract a run of `config` would be judged under by this build. */
export function configContract(config: StagingConfig): RunContract {
  return {
    protocol_revision: PROTOCOL_REVISION,
    operations: [...OPERATIONS],
    document_count: config.document_count,
    deletion_window_seconds: config.deletion_window_seconds,
    sample_interval_seconds: config.sample_interval_seconds,
    timeout_seconds: { ...config.timeout_seconds },
    assertion_rules: ASSERTION_RULES_REVISION,
    families: [...ASSERTION_FAMILIES],
  };
}

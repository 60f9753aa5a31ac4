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
  /** The adapter contract revision (`trace-staging/1`). */
  protocol_revision: string;
  /** Its operations. */
  operations: Operation[];
  /** Canary documents per run. */
  document_count: number;
  /** The deletion window, in seconds. */
  deletion_window_seconds: number;
  /** Seconds between samples. */
  sample_interval_seconds: number;
  /** Per-operation request budgets, in seconds. */
  timeout_seconds: Timing["timeout_seconds"];
  /** The rules revision the verdict was decided under (`trace-assertions/…`). */
  assertion_rules: string;
  /** The assertion families those rules group findings into. */
  families: string[];
}

/** One failed assertion a regression pins: a finding code on a subject. */
export interface PinnedAssertion {
  /** The finding code, e.g. `residual_store`. */
  code: string;
  /** What it is about, e.g. `cache_records`. */
  subject: string;
  /** The assertion families of the subject. */
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

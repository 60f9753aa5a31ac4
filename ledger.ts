/**
 * The ledger: registered targets, completed run reports, saved regressions
 * and erasure receipts, as append-only rows whose SHA-256 digests are
 * chained, so a removed or altered row is detected. Every read verifies what
 * it returns.
 *
 * @example Verify the chain and list the saved regressions
 * ```ts
 * import { listRegressions, openDb, verifyLedger } from "@trace/trace/ledger";
 *
 * const db = await openDb({ dataDir: "./.trace", create: false });
 * const verification = await verifyLedger(db);
 * console.log(verification.ok, verification.head);
 * for (const regression of await listRegressions(db)) {
 *   console.log(regression.regression_id, regression.status);
 * }
 * db.close();
 * ```
 *
 * @module
 */

export {
  migrate,
  type Migration,
  openDb,
  type OpenDbOptions,
  type TraceDb,
} from "./lib/db.ts";
export { ALL_MIGRATIONS } from "./lib/migrations.ts";
export {
  registerTarget,
  type Registration,
  type TargetRecord,
  type TargetRegistration,
  type TargetSource,
} from "./lib/ledger/targets.ts";
export {
  formatHead,
  type HeadView,
  type LedgerHead,
  ledgerHead,
  parseHead,
} from "./lib/ledger/head.ts";
export {
  type GateFailure,
  type GateJudgementOptions,
  gateRegressions,
  type GateResult,
  listRegressions,
  REGRESSION_STATUSES,
  type RegressionDefinition,
  type RegressionStatus,
  type RegressionView,
  type SavedRegression,
  saveRegression,
} from "./lib/ledger/regressions.ts";
export type { PinnedAssertion, RunContract } from "./lib/ledger/contract.ts";
export type {
  CleanupRecord,
  CleanupStatus,
  DeletionCounts,
  LaterCleanup,
} from "./lib/ledger/cleanups.ts";
export {
  type ReplayRecurrence,
  replayRecurrence,
  type SavedFailure,
} from "./lib/ledger/recurrence.ts";
export {
  type ComparedCleanup,
  type ComparedRun,
  type CompareOptions,
  compareRuns,
  type FindingKey,
  type RunComparison,
} from "./lib/ledger/compare.ts";
export {
  type BrokenRow,
  type LedgerVerification,
  verifyLedger,
  type VerifyOptions,
} from "./lib/ledger/verify.ts";
export {
  type ErasureReceipt,
  listReceipts,
  readReceipt,
  RECEIPT_SCHEMA,
  RECEIPT_TRIGGERS,
  type ReceiptTrigger,
  type RecordedReceipt,
} from "./lib/ledger/erasure_receipts.ts";

// What the ledger takes and returns, defined with the contract
export {
  type Baseline,
  type Cleanup,
  type CleanupDelete,
  type DeletionRecord,
  ERROR_CODES,
  type ErrorCode,
  type Finding,
  type FindingSeverity,
  type Inventory,
  type MarkerForm,
  type MarkerPlace,
  type Operation,
  OPERATIONS,
  RENDERING_TRAITS,
  type RenderingTrait,
  REPORT_SCHEMA,
  REQUEST_FAILURES,
  type RequestErrorRecord,
  type RequestFailure,
  type RunMarkers,
  type RunReport,
  type RunState,
  type Sample,
  type StagingConfig,
  type StagingTimeouts,
  type TargetRef,
  type Timing,
  TraceError,
  type Verdict,
  VERDICTS,
} from "./contract.ts";

/**
 * Operator security, without HTTP: accounts and roles, the permission
 * matrix and read-only mode, scope narrowing, host hooks and what they must
 * answer, the hash-chained audit trail, the audited reveal's lookup, inert
 * replay plans and drafts, and the capabilities a principal has.
 *
 * May import `lib/db.ts`, `lib/ledger/chain.ts` (its digest functions),
 * `lib/obs/` (its root and `query/`) and the generic helpers. Entry points
 * (`routes/`, `cli/`) use it through this file.
 *
 * @module
 */

export {
  type AuthMethod,
  isTenantBound,
  type OperatorAccount,
  type Principal,
  type Role,
  roleAtLeast,
  ROLES,
  type TenantScope,
  UNSCOPED,
} from "./roles.ts";
export {
  type AccessMode,
  type Action,
  ACTION_NAMES,
  type ActionRule,
  ACTIONS,
  AUDITED_ACTIONS,
  can,
  decide,
  type Decision,
  READ_ONLY_ENV,
  readOnlyFromEnv,
  type Refusal,
} from "./permissions.ts";
export {
  describeScope,
  inScope,
  narrowScope,
  SCOPE_KEYS,
  ScopeError,
  type ScopeKey,
  type ScopeRequest,
  tenantOf,
} from "./scope.ts";
export {
  AccountBook,
  type AccountsConfig,
  type AccountsOptions,
  type AccountSpec,
  type AccountsSource,
  checkAccounts,
  createOperatorDirectory,
  type DirectoryOptions,
  LOCAL_OPERATOR,
  MIN_ACCOUNT_TOKEN_LENGTH,
  type OperatorDirectory,
  type OtherTokens,
  parseAccounts,
  TOKEN_OPERATOR,
} from "./accounts.ts";
export {
  ERASURE_AUDIT_ACTION,
  type ErasureDetail,
  formatErasureDetail,
  parseErasureDetail,
} from "./erasure_detail.ts";
export {
  type ArtifactRequest,
  type ArtifactResolver,
  type ArtifactState,
  type AuthorizationRequest,
  authorizeResource,
  DEFAULT_HOOK_TIMEOUT_MS,
  HOOK_NAMES,
  type HookAvailability,
  hookAvailability,
  type HookCallOptions,
  HookError,
  type HookFailure,
  type HookName,
  type HostHooks,
  type IdentityRequest,
  type IdentityResolution,
  type IdentityResolver,
  isUnresolvedIdentity,
  resolveArtifact,
  resolveIdentity,
  type ResourceAuthorizer,
  type ResourceRef,
} from "./hooks.ts";
export {
  appendAudit,
  AUDIT_OUTCOMES,
  type AuditActor,
  type AuditEntry,
  type AuditOutcome,
  type AuditRecord,
  type AuditTargets,
  AuditUnavailableError,
} from "./audit.ts";
export {
  type AuditHead,
  auditHead,
  type AuditPoint,
  type AuditVerification,
  type AuditVerifyOptions,
  formatAuditHead,
  parseAuditHead,
  verifyAudit,
} from "./audit_verify.ts";
export { type AuditListOptions, listAudit } from "./audit_list.ts";
export { AuditIntegrityError } from "./audit_integrity.ts";
export {
  AUTH_COMPONENT,
  AUTH_MIGRATIONS,
  requireAuthSchema,
  restoreAuthGuards,
} from "./schema.ts";
export {
  type SqlRunner,
  SUBJECT_KINDS,
  type SubjectKind,
} from "./subject_digest.ts";
export {
  findRevealTarget,
  parseRevealRequest,
  type RevealRequest,
} from "./reveal.ts";
export {
  authorizePlan,
  freezePlan,
  incompleteSelection,
  MAX_REPLAY_EVENTS,
  MAX_REPLAY_REFS,
  parseReplaySelection,
  type PlannedRef,
  readReplaySelection,
  type ReadSelectionOptions,
  type ReplayPlan,
  type ReplaySelection,
  selectionMatches,
} from "./replay.ts";
export {
  type CreatedDraft,
  createDraft,
  deleteDrafts,
  type DraftErasure,
  draftsReached,
  type ErasedTraceKeys,
  listDrafts,
  type ReplayDraft,
} from "./drafts.ts";
export {
  ACTION_ENDPOINTS,
  ACTION_HOOKS,
  type ActionCapability,
  actionCapability,
  type Capabilities,
  type CapabilityContext,
  describeCapabilities,
  missingHookMessage,
  type Unavailable,
} from "./capabilities.ts";
export {
  type ArtifactQuery,
  parseAccountRequest,
  parseArtifactQuery,
} from "./lookups.ts";
export {
  Email,
  EMAIL_PATTERN,
  fieldLabel,
  OpaqueId,
  OperatorInputError,
  parseOperatorInput,
  Reason,
} from "./_input.ts";

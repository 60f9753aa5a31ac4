/**
 * The few domain errors callers catch. Each carries a stable `code` so the CLI
 * (exit codes) and the HTTP app (statuses) can map them in one place each.
 *
 * @module
 */

/** Stable machine-readable error codes shared by CLI, HTTP and MCP. */
export const ERROR_CODES = [
  "config_invalid",
  "usage",
  "not_found",
  "conflict",
  "refused",
  "protocol",
  "transport",
  "ledger_integrity",
  "audit_integrity",
  "storage",
  "unauthorized",
  "forbidden",
  "erasure_unmatched",
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = typeof ERROR_CODES[number];

/** Base class: a condition a caller is expected to handle. */
export class TraceError extends Error {
  /** Stable code for mapping to exit codes and statuses. */
  readonly code: ErrorCode;

  /** `message` is one line: what was wrong and what to do; `options.cause` keeps the underlying error. */
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = "TraceError";
  }
}

/** A config file, flag or environment variable failed validation. */
export class ConfigError extends TraceError {
  /** `message` is one line: what was wrong and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super("config_invalid", message, options);
    this.name = "ConfigError";
  }
}

/** The command line itself was malformed. */
export class UsageError extends TraceError {
  /** `message` is one line: what was wrong and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super("usage", message, options);
    this.name = "UsageError";
  }
}

/** A named record (run, target, regression) does not exist. */
export class NotFoundError extends TraceError {
  /** `message` is one line: what was wrong and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super("not_found", message, options);
    this.name = "NotFoundError";
  }
}

/**
 * A request conflicts with what is stored: a write that would change a
 * record the rules keep immutable, or an id that names more than one stored
 * record (a root id two applications use), which the caller resolves by
 * naming the one it means.
 */
export class ConflictError extends TraceError {
  /** `message` is one line: what was wrong and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super("conflict", message, options);
    this.name = "ConflictError";
  }
}

/** A well-formed request that a domain rule refuses (e.g. saving a PASS). */
export class RefusedError extends TraceError {
  /** `message` is one line: what was wrong and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super("refused", message, options);
    this.name = "RefusedError";
  }
}

/** Stored history failed digest or chain verification. */
export class LedgerIntegrityError extends TraceError {
  /** `message` is one line: what was wrong and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super("ledger_integrity", message, options);
    this.name = "LedgerIntegrityError";
  }
}

/** The database could not be opened, migrated or written. */
export class StorageError extends TraceError {
  /** `message` is one line: what was wrong and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super("storage", message, options);
    this.name = "StorageError";
  }
}

/** Returns a one-line message for any thrown value, without stack traces. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? "";
}

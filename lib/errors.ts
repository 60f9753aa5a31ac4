/**
 * The few domain errors callers catch. Each carries a stable `code` so the CLI
 * (exit codes) and the HTTP app (statuses) can map them in one place each.
 *
 * @module
 */

import { clipValue } from "./echo.ts";

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

/**
 * A config's `token_env` names a variable this process's environment does
 * not hold (unset or empty), so no bearer token can be sent. Its code stays
 * `config_invalid`; it carries the variable so that a server, whose
 * environment was fixed when it started, can say how to set it there
 * ({@link TokenEnvUnsetError.withRemedy}).
 */
export class TokenEnvUnsetError extends ConfigError {
  /** The variable `token_env` names, as the config spells it. */
  readonly variable: string;

  /** `remedy` is what to do, one clause (default: set it or remove token_env). */
  constructor(
    variable: string,
    remedy = "set it or remove token_env",
    options?: ErrorOptions,
  ) {
    // The name comes from a config file: a pasted blob must not bury the sentence.
    super(
      `Cannot read bearer token: environment variable ${
        clipValue(variable)
      } is unset or empty; ${remedy}`,
      options,
    );
    this.name = "TokenEnvUnsetError";
    this.variable = variable;
  }

  /**
   * The same refusal with the remedy of the process that refused:
   * `remedy` gets the variable as messages show it and returns the clause.
   */
  withRemedy(remedy: (shown: string) => string): TokenEnvUnsetError {
    return new TokenEnvUnsetError(
      this.variable,
      remedy(clipValue(this.variable)),
      { cause: this },
    );
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

/**
 * Operator accounts (`TRACE_UI_AUTH_ACCOUNTS`) and the directory that turns
 * a session's operator name or a bearer token into an account.
 *
 * The configuration is a JSON object of operator names to a token, a role
 * and an optional tenant scope:
 *
 * ```json
 * {"support-1": {"token": "…", "role": "analyst", "application_id": "app-1"}}
 * ```
 *
 * Tokens are unique, at least 16 printable ASCII characters without
 * whitespace, and differ from `TRACE_INGEST_TOKEN` and `TRACE_UI_AUTH_TOKEN`.
 * A bad configuration is refused whole with one line naming the account and
 * the problem; no message ever repeats a token. The directory is looked up on every request, so
 * {@link AccountBook.replace} (a host reloading its accounts) takes effect
 * on the next request of every session.
 *
 * @module
 */

import * as v from "valibot";
import { sha256Hex } from "../canonical_json.ts";
import { ConfigError } from "../errors.ts";
import { UNSAFE_ID_CHAR } from "../obs/model.ts";
import { parseStrictJson, StrictJsonError } from "../json/strict_json.ts";
import {
  type OperatorAccount,
  type Role,
  ROLES,
  type TenantScope,
} from "./roles.ts";

/** Shortest token accepted for an account. */
export const MIN_ACCOUNT_TOKEN_LENGTH = 16;

/** Operator name of sessions opened with the one-time login URL. */
export const LOCAL_OPERATOR = "local";
/** Operator name of `TRACE_UI_AUTH_TOKEN` (sessions and bearer requests). */
export const TOKEN_OPERATOR = "token";

const RESERVED_NAMES: ReadonlySet<string> = new Set([
  LOCAL_OPERATOR,
  TOKEN_OPERATOR,
]);

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// deno-lint-ignore no-control-regex
const OPAQUE = /^[^\u0000-\u001f\u007f]{1,256}$/;

// An event id may not hold these (nor a lone surrogate), so a scope that does
// would bind its account to evidence that can never exist.
const ScopeId = v.pipe(
  v.string("must be a string"),
  v.regex(OPAQUE, "must be 1 to 256 characters without control characters"),
  v.check(
    (id) => id.isWellFormed() && !UNSAFE_ID_CHAR.test(id),
    "must not contain control, line separator or bidirectional formatting characters, which no event id carries",
  ),
);

/** The keys an account may have. */
const ACCOUNT_KEYS = ["token", "role", "application_id", "user_id"] as const;

/** One account as configured. Messages never quote a value, nor an unknown key (it may be a token pasted in the wrong place). */
const AccountSpecSchema = v.strictObject(
  {
    token: v.pipe(
      v.string("must be a string"),
      v.check(
        (token) =>
          token.length >= MIN_ACCOUNT_TOKEN_LENGTH && !/\s/.test(token),
        `must be at least ${MIN_ACCOUNT_TOKEN_LENGTH} characters with no whitespace`,
      ),
      // A control character cannot be typed at /login nor sent in a header
      // reliably, and would reach logs and terminals raw where a token is shown.
      v.check(
        (token) => token.isWellFormed() && !CONTROL.test(token),
        "must not contain control characters; use printable characters only",
      ),
      // Clients send a header as UTF-8 and the server reads it byte by byte,
      // so a token beyond ASCII never matches a bearer request.
      v.check(
        (token) => /^[\x21-\x7e]*$/.test(token),
        "must be printable ASCII (letters, digits, punctuation); a bearer header carries no other characters",
      ),
    ),
    role: v.picklist(ROLES, `must be one of ${ROLES.join(", ")}`),
    application_id: v.optional(ScopeId),
    user_id: v.optional(v.nullable(ScopeId)),
  },
  (issue) =>
    issue.expected === "never"
      ? `has a key that is not known; the allowed keys are ${
        ACCOUNT_KEYS.join(", ")
      }`
      : issue.received === "undefined"
      ? "is required"
      : "must be a JSON object",
);

/** One configured account, as written. */
export interface AccountSpec {
  /** The operator's token: at least 16 characters, no whitespace, unique. */
  token: string;
  /** What the operator may do. */
  role: Role;
  /** The one application the operator may read; absent: every application. */
  application_id?: string | undefined;
  /** The one user the operator may read (`null`: anonymous evidence only); absent: every user. */
  user_id?: string | null | undefined;
}

// The interface restates what the schema returns, for readers of the docs;
// this line stops compiling when the two drift apart.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;
type Holds<T extends true> = T;
type _AccountSpecMatches = Holds<
  Same<AccountSpec, v.InferOutput<typeof AccountSpecSchema>>
>;

/** Operator names to their accounts. */
export type AccountsConfig = Readonly<Record<string, AccountSpec>>;

/** Tokens an account token must differ from. */
export interface OtherTokens {
  /** `TRACE_INGEST_TOKEN`. */
  ingestToken?: string | undefined;
  /** `TRACE_UI_AUTH_TOKEN`. */
  adminToken?: string | undefined;
}

const ENV = "TRACE_UI_AUTH_ACCOUNTS";

/**
 * Where accounts came from, which their errors name: `"env"` the
 * `TRACE_UI_AUTH_ACCOUNTS` variable, `"value"` accounts passed in code
 * (errors then say "accounts": the reader set no variable).
 */
export type AccountsSource = "env" | "value";

/** Options of {@link parseAccounts} and {@link checkAccounts}. */
export interface AccountsOptions extends OtherTokens {
  /** Where the accounts came from (default: `"env"` for {@link parseAccounts}, `"value"` for {@link checkAccounts}). */
  source?: AccountsSource;
}

/** What an error calls the accounts: the variable they were read from, or "Accounts". */
function accountsLabel(source: AccountsSource): string {
  return source === "env" ? ENV : "Accounts";
}

/** Parses accounts as JSON text, by default the `TRACE_UI_AUTH_ACCOUNTS` text (strict JSON: duplicate names are refused). */
export function parseAccounts(
  text: string,
  options: AccountsOptions = {},
): AccountsConfig {
  const source = options.source ?? "env";
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    // The parser's message names an offset and a rule, never the text itself.
    throw new ConfigError(
      `${
        source === "env" ? `${ENV} is` : "Accounts are"
      } not valid JSON (${error.message}); write an object of operator names to {token, role}`,
    );
  }
  const accounts = checkAccounts(value, { ...options, source });
  // Set to "{}", the variable names no one: a placeholder left in, not a choice.
  if (source === "env" && Object.keys(accounts).length === 0) {
    throw new ConfigError(
      `${ENV} holds no account; unset it to run without operator accounts, or add one as {"name": {"token": "...", "role": "..."}}`,
    );
  }
  return accounts;
}

/** Validates accounts given as a value (by default a host passing them to `createApp`). */
export function checkAccounts(
  value: unknown,
  options: AccountsOptions = {},
): AccountsConfig {
  const source = options.source ?? "value";
  const label = accountsLabel(source);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigError(
      `${label} must be ${
        source === "env" ? "a JSON object" : "an object"
      } of operator names to {token, role}`,
    );
  }
  const accounts: Record<string, AccountSpec> = {};
  const owners = new Map<string, string>();
  for (const [name, raw] of Object.entries(value)) {
    const spec = checkAccount(label, name, raw);
    const other = owners.get(spec.token);
    if (other !== undefined) {
      throw accountError(
        label,
        name,
        `has the same token as "${other}"; give every account its own token`,
      );
    }
    const same = spec.token === options.ingestToken
      ? "TRACE_INGEST_TOKEN"
      : spec.token === options.adminToken
      ? "TRACE_UI_AUTH_TOKEN"
      : null;
    if (same !== null) {
      // Accounts from the environment sit beside the server's token
      // variables; a host passing accounts in code passed its tokens too.
      const token = source === "env"
        ? same
        : same === "TRACE_INGEST_TOKEN"
        ? "the ingest token"
        : "the admin token";
      throw accountError(
        label,
        name,
        `has the same token as ${token}; give the account its own token`,
      );
    }
    owners.set(spec.token, name);
    accounts[name] = spec;
  }
  return accounts;
}

function checkAccount(
  label: string,
  name: string,
  raw: unknown,
): AccountSpec {
  if (!NAME.test(name)) {
    throw new ConfigError(
      `${label}: an operator name must be 1 to 64 letters, digits or . _ @ - (starting with a letter or digit); rename it`,
    );
  }
  if (RESERVED_NAMES.has(name)) {
    throw accountError(
      label,
      name,
      "is a reserved operator name (local, token); rename the account",
    );
  }
  const parsed = v.safeParse(AccountSpecSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0]!;
    // Only a known key is named: an unknown one may itself be a secret.
    const key = issue.expected === "never"
      ? undefined
      : issue.path?.map((item) => String(item.key)).join(".");
    throw accountError(
      label,
      name,
      key ? `${key} ${issue.message}` : issue.message,
    );
  }
  return parsed.output;
}

function accountError(
  label: string,
  name: string,
  problem: string,
): ConfigError {
  return new ConfigError(`${label}: account "${name}" ${problem}`);
}

/**
 * The configured accounts, replaceable while the server runs (a host
 * reloading its account list). Every replacement is validated whole first;
 * on error nothing changes. Sessions of removed or downgraded accounts are
 * re-resolved at their next request.
 */
export class AccountBook {
  #accounts: AccountsConfig;
  #others: OtherTokens = {};
  #source: AccountsSource;
  #version = 0;

  /**
   * Validates `accounts` (operator names to `{token, role, application_id?,
   * user_id?}`); throws a `ConfigError` naming the account, never its token,
   * and naming `TRACE_UI_AUTH_ACCOUNTS` only when `options.source` is `"env"`
   * (default `"value"`: accounts passed in code).
   */
  constructor(
    accounts: unknown = {},
    options: { source?: AccountsSource } = {},
  ) {
    this.#source = options.source ?? "value";
    this.#accounts = checkAccounts(accounts, { source: this.#source });
  }

  /** The current accounts. */
  get accounts(): AccountsConfig {
    return this.#accounts;
  }

  /** Increases on every replacement. */
  get version(): number {
    return this.#version;
  }

  /** Replaces every account; throws a `ConfigError` (and keeps the old list) when invalid. */
  replace(accounts: unknown): void {
    this.#accounts = checkAccounts(accounts, {
      ...this.#others,
      source: this.#source,
    });
    this.#version++;
  }

  /** Binds the server's other tokens, which no account token may equal (checked now and on replace). */
  bindTokens(others: OtherTokens): void {
    checkAccounts(this.#accounts, { ...others, source: this.#source });
    this.#others = { ...others };
  }
}

/** Resolves operator names and tokens to accounts, from the current configuration. */
export interface OperatorDirectory {
  /** The account of `name` now, or `null` when it no longer exists. */
  resolve(name: string): OperatorAccount | null;
  /** The account a bearer or login token belongs to, or `null`. */
  byToken(token: string): Promise<OperatorAccount | null>;
  /** Whether any token (the admin token or an account's) can sign in. */
  hasTokens(): boolean;
  /** How many configured accounts there are (built-in administrators not counted). */
  accountCount(): number;
  /** Whether a configured account is bound to a tenant. */
  hasTenantBoundAccounts(): boolean;
}

/** What a directory is built from. */
export interface DirectoryOptions extends OtherTokens {
  /** Whether a one-time login exists (its sessions are the `local` administrator). */
  oneTimeLogin?: boolean;
  /** Configured accounts: a replaceable book, or a config validated here. */
  accounts?: AccountBook | unknown;
}

interface Entry {
  account: OperatorAccount;
  token: string;
}

/** A directory of the built-in administrators and the configured accounts. */
export function createOperatorDirectory(
  options: DirectoryOptions,
): OperatorDirectory {
  const book = options.accounts instanceof AccountBook
    ? options.accounts
    : new AccountBook(options.accounts ?? {});
  book.bindTokens({
    ingestToken: options.ingestToken,
    adminToken: options.adminToken,
  });
  let cached = { version: -1, entries: new Map<string, Entry>() };
  const entries = () => {
    if (cached.version !== book.version) {
      cached = { version: book.version, entries: entriesOf(book.accounts) };
    }
    return cached.entries;
  };
  const admin = options.adminToken === undefined ? null : {
    account: builtinAdmin(
      TOKEN_OPERATOR,
      `token:${sha256Hex(options.adminToken)}`,
    ),
    token: options.adminToken,
  };
  const local = options.oneTimeLogin
    ? builtinAdmin(LOCAL_OPERATOR, "one-time-login")
    : null;
  return {
    resolve(name) {
      if (name === LOCAL_OPERATOR) return local;
      if (name === TOKEN_OPERATOR) return admin?.account ?? null;
      return entries().get(name)?.account ?? null;
    },
    async byToken(token) {
      // Every candidate is compared, so the time taken does not say which one matched.
      let found: OperatorAccount | null = null;
      const all = [...entries().values()];
      for (const entry of admin ? [admin, ...all] : all) {
        if (await sameSecret(token, entry.token)) found ??= entry.account;
      }
      return found;
    },
    hasTokens: () => admin !== null || entries().size > 0,
    accountCount: () => entries().size,
    hasTenantBoundAccounts: () =>
      [...entries().values()].some((entry) =>
        Object.keys(entry.account.scope).length > 0
      ),
  };
}

function builtinAdmin(name: string, credential: string): OperatorAccount {
  return { name, role: "admin", scope: {}, credential };
}

function entriesOf(config: AccountsConfig): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  for (const [name, spec] of Object.entries(config)) {
    const scope: TenantScope = {};
    if (spec.application_id !== undefined) {
      scope.application_id = spec.application_id;
    }
    if (spec.user_id !== undefined) scope.user_id = spec.user_id;
    entries.set(name, {
      account: {
        name,
        role: spec.role,
        scope: Object.freeze(scope),
        credential: `account:${sha256Hex(spec.token)}`,
      },
      token: spec.token,
    });
  }
  return entries;
}

const encoder = new TextEncoder();

/** Compares two secrets in time that depends on their lengths only. */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

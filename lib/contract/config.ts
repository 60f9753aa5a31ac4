/**
 * The staging-target config: what an operator declares about the app under
 * test. Validated once at the boundary; everything inside trusts the type.
 *
 * @module
 */

import * as v from "valibot";
import { ConfigError } from "../errors.ts";
import { describeIssues, objectIssueMessage } from "../issues.ts";
import { parseStrictJson } from "../json/strict_json.ts";
import { isLoopbackHost } from "../loopback.ts";
import { closestName } from "../suggest.ts";
import {
  TRACE_CREDENTIALS,
  traceCredentialProblem,
} from "../trace_credentials.ts";

const BaseUrl = v.pipe(
  v.string("must be a string"),
  v.check(
    (value) => URL.canParse(value),
    (issue) => unparsableUrlReason(String(issue.input)),
  ),
  v.transform((value) => new URL(value)),
  v.check(
    (url) => url.protocol === "http:" || url.protocol === "https:",
    "must use http:// or https://",
  ),
  // `URL` accepts port 0, which no connection can reach.
  v.check((url) => url.port !== "0", "has port 0, outside 1-65535"),
  v.check(
    (url) => url.username === "" && url.password === "",
    "must not contain credentials; use token_env for a bearer token",
  ),
  // A bare "?" leaves `search` empty but still reaches the wire.
  v.check(
    (url) => url.search === "" && !url.href.includes("?"),
    "must not contain a query string",
  ),
  v.check(
    (url) => url.hash === "" && !url.href.includes("#"),
    "must not contain a fragment",
  ),
  v.check(
    (url) => url.protocol === "https:" || isLoopbackHost(url.hostname),
    "plain http:// is allowed only for loopback hosts (localhost, 127.0.0.1, [::1]); use https://",
  ),
  v.transform((url) => url.href.replace(/\/+$/, "")),
);

/** Why a base_url that `URL` cannot parse is wrong, as precisely as its text allows. */
function unparsableUrlReason(value: string): string {
  const port = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(value)
    ?.[1];
  if (port !== undefined && Number(port) > 65_535) {
    return `has port ${port}, outside 1-65535`;
  }
  return "must be an absolute http:// or https:// URL";
}

/** Most samples one window may take (each sample is four requests). */
const MAX_SAMPLES = 10_000;

const Seconds = (max: number) =>
  v.pipe(
    v.number("must be a number of seconds"),
    v.finite("must be finite"),
    v.gtValue(0, "must be greater than 0"),
    v.maxValue(max, `must be at most ${max}`),
  );

const TIMEOUT_ENTRIES = {
  ingest: v.optional(Seconds(300), 10),
  query: v.optional(Seconds(300), 10),
  inventory: v.optional(Seconds(300), 10),
  delete: v.optional(Seconds(300), 10),
};

const Timeouts = v.strictObject(
  TIMEOUT_ENTRIES,
  keyIssueMessage(
    Object.keys(TIMEOUT_ENTRIES),
    "allowed keys: ingest, query, inventory, delete",
  ),
);

/**
 * The object issue message of a config object whose keys are `known`: an
 * unknown key close to one of them (a typo, or a name without its unit:
 * `deletion_window` for `deletion_window_seconds`) is answered with that
 * key as a suggestion.
 */
function keyIssueMessage(known: readonly string[], hint: string) {
  const message = objectIssueMessage(hint);
  return (issue: v.BaseIssue<unknown>): string => {
    const key = issue.path?.at(-1)?.key;
    const suggestion = issue.expected === "never" && typeof key === "string"
      ? closestKey(key, known)
      : undefined;
    return suggestion === undefined
      ? message(issue)
      : `unknown key (did you mean ${suggestion}?); rename or remove it (${hint})`;
  };
}

/** The known key `key` was probably meant to be, if any. */
function closestKey(key: string, known: readonly string[]): string | undefined {
  const typo = closestName(key, known);
  if (typo !== undefined) return typo;
  // A key given without its qualifier: `url` for `base_url` (only when one
  // key has that ending: `seconds` ends three of them).
  const qualified = known.filter((k) => k.endsWith(`_${key}`));
  if (qualified.length === 1) return qualified[0];
  // Keys end in their unit or kind (`_seconds`, `_count`), which is easy to leave off.
  const stems = known.filter((k) => k.includes("_")).map((k) =>
    k.slice(0, k.lastIndexOf("_"))
  );
  const stem = closestName(key, stems);
  return stem === undefined
    ? undefined
    : known.find((k) => k.startsWith(`${stem}_`));
}

/** A validated staging config with defaults filled in. */
export interface StagingConfig {
  /** The adapter, without a trailing slash: `https://`, or `http://` to a loopback host. */
  base_url: string;
  /** Always `"staging"`: Trace writes synthetic data only to staging. */
  environment: "staging";
  /** Always `true`: the operator allows Trace to create and delete synthetic records. */
  allow_synthetic_writes: true;
  /** Name of the environment variable holding the adapter's bearer token (https only). */
  token_env?: string | undefined;
  /** Canary documents per run (1 to 1000, default 3). */
  document_count: number;
  /** How long deletion may take to propagate, in seconds (default 5, at most 3600). */
  deletion_window_seconds: number;
  /** Seconds between samples, at most the window (default 1, at least 0.05). */
  sample_interval_seconds: number;
  /** Per-operation request budget in seconds, covering connect, headers and body (default 10 each). */
  timeout_seconds: StagingTimeouts;
}

/** Request budgets per operation, in seconds. */
export interface StagingTimeouts {
  /** Budget of each `/ingest` request. */
  ingest: number;
  /** Budget of each `/query` request. */
  query: number;
  /** Budget of each `/inventory` request. */
  inventory: number;
  /** Budget of each `/delete` request. */
  delete: number;
}

const CONFIG_ENTRIES = {
  base_url: BaseUrl,
  environment: v.literal(
    "staging",
    'must be "staging": Trace writes synthetic data only to staging',
  ),
  allow_synthetic_writes: v.literal(
    true,
    "must be true: confirm that Trace may create and delete synthetic records",
  ),
  token_env: v.optional(
    v.pipe(
      v.string("must be a string"),
      v.regex(
        /^[A-Za-z_][A-Za-z0-9_]*$/,
        "must be an environment variable name",
      ),
    ),
  ),
  document_count: v.optional(
    v.pipe(
      v.number("must be an integer"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(1000, "must be at most 1000"),
    ),
    3,
  ),
  deletion_window_seconds: v.optional(Seconds(3600), 5),
  sample_interval_seconds: v.optional(
    v.pipe(
      Seconds(600),
      v.minValue(0.05, "must be at least 0.05 (50 ms between samples)"),
    ),
    1,
  ),
  timeout_seconds: v.optional(Timeouts, {}),
};

const ConfigShape = v.pipe(
  v.strictObject(
    CONFIG_ENTRIES,
    keyIssueMessage(
      Object.keys(CONFIG_ENTRIES),
      "see fixtures/staging-adapter.json for the allowed keys",
    ),
  ),
  v.forward(
    v.check(
      (c) => c.sample_interval_seconds <= c.deletion_window_seconds,
      "must not exceed deletion_window_seconds",
    ),
    ["sample_interval_seconds"],
  ),
  v.forward(
    v.check(
      (c) =>
        c.deletion_window_seconds / c.sample_interval_seconds <= MAX_SAMPLES,
      `gives more than ${MAX_SAMPLES} samples in the window; sample less often`,
    ),
    ["sample_interval_seconds"],
  ),
  v.forward(
    v.check(
      (c) => c.token_env === undefined || c.base_url.startsWith("https:"),
      "requires an https:// base_url: a bearer token is never sent over plain HTTP",
    ),
    ["token_env"],
  ),
);

/**
 * Schema of a staging config given to Trace (a file, stdin, a registration);
 * unknown keys are refused. Its `token_env` may not name Trace's own
 * credentials. Configs stored before that rule are read with
 * {@link parseStoredStagingConfig}, and the transport refuses such a
 * variable when it reads the token, so a stored one is never sent either.
 */
export const StagingConfigSchema: v.GenericSchema<unknown, StagingConfig> = v
  .pipe(
    ConfigShape,
    v.forward(
      v.check(
        (c) =>
          c.token_env === undefined ||
          traceCredentialProblem(c.token_env) === null,
        `must not name one of Trace's own credentials (${
          TRACE_CREDENTIALS.join(", ")
        }): the staging adapter would receive it; give the staging token a variable of its own`,
      ),
      ["token_env"],
    ),
  );

/** Validates an already-parsed JSON value; throws {@link ConfigError} naming the field. */
export function parseStagingConfig(
  value: unknown,
  source = "config",
): StagingConfig {
  return parseWith(StagingConfigSchema, value, source);
}

/**
 * Validates a config the ledger stored, registered under the rules of its
 * day: one whose `token_env` names a Trace credential still reads (its
 * target can be listed and retired); running it is refused when the token
 * is read.
 */
export function parseStoredStagingConfig(
  value: unknown,
  source: string,
): StagingConfig {
  return parseWith(ConfigShape, value, source);
}

function parseWith(
  schema: v.GenericSchema<unknown, StagingConfig>,
  value: unknown,
  source: string,
): StagingConfig {
  // valibot's object schemas accept arrays and report a missing first key for
  // other values; say what is actually wrong.
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`Invalid ${source}: must be a JSON object`);
  }
  const result = v.safeParse(schema, value);
  if (!result.success) {
    throw new ConfigError(
      `Invalid ${source}: ${describeIssues(misspeltFirst(result.issues))}`,
    );
  }
  return result.output;
}

/**
 * `issues` with an unknown key that stands for a missing required one
 * (`url` for `base_url`) first: the missing key alone would hide the typo,
 * which the unknown key's message names with its suggestion.
 */
function misspeltFirst(
  issues: readonly v.BaseIssue<unknown>[],
): readonly v.BaseIssue<unknown>[] {
  const keyOf = (issue: v.BaseIssue<unknown>) => issue.path?.at(-1)?.key;
  const parentOf = (issue: v.BaseIssue<unknown>) => issue.path?.at(-1)?.input;
  const misspelt = issues.find((issue) => {
    const key = keyOf(issue);
    if (issue.expected !== "never" || typeof key !== "string") return false;
    const missing = issues.filter((other) =>
      other.expected !== "never" && other.received === "undefined" &&
      parentOf(other) === parentOf(issue)
    ).map((other) => String(keyOf(other)));
    return closestKey(key, missing) !== undefined;
  });
  return misspelt
    ? [misspelt, ...issues.filter((i) => i !== misspelt)]
    : issues;
}

/** Parses config file text strictly (duplicate keys refused) and validates it. */
export function parseStagingConfigText(
  text: string,
  source = "config",
): StagingConfig {
  if (text.startsWith("\uFEFF")) {
    throw new ConfigError(
      `Invalid ${source}: starts with a byte-order mark; save it as UTF-8 without BOM`,
    );
  }
  let value: unknown;
  try {
    // Configs are edited by hand: comments are allowed (`trace init` writes some).
    value = parseStrictJson(text, { comments: true });
  } catch (error) {
    throw new ConfigError(
      `Invalid ${source}: not valid JSON (${(error as Error).message})`,
    );
  }
  return parseStagingConfig(value, source);
}

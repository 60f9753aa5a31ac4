/**
 * Flag parsing over `node:util` `parseArgs` (the seam where `@std/cli` would
 * go). Unknown flags and missing values become {@link UsageError}s.
 *
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import * as v from "valibot";
import { UsageError } from "../lib/errors.ts";
import { OpaqueIdSchema } from "../lib/obs/model.ts";
import { clipValue, ECHO_LIMIT, quoteValue } from "../lib/echo.ts";
import { closestName } from "../lib/suggest.ts";

/** Flag declarations in `node:util` form. */
export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

/** One option or positional as the parser met it, in order. */
type ParsedToken =
  | { kind: "option"; name: string; value?: string | undefined }
  | { kind: "positional" | "option-terminator" };

/** Flags every data-touching command accepts. */
export const DATA_FLAGS = {
  "data-dir": { type: "string" },
  db: { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const satisfies FlagSpec;

/**
 * Second spellings the parser accepts for a declared flag, alias to flag:
 * the observability commands once spelled the application `--application-id`
 * and the others `--application`, so either works wherever one is declared.
 * Help names only the flag; giving both is refused.
 */
export const FLAG_ALIASES: Readonly<Record<string, string>> = {
  "application-id": "application",
};

/**
 * Parses `args` for `command`; throws a one-line usage error naming the flag.
 * Messages carry no command prefix: `main()` adds `trace <command>:` once.
 * A negative-looking value after a string flag (`--limit -1`) is taken as
 * that flag's value, so it reaches the flag's own check and gets a message
 * saying what is allowed, instead of the parser's "ambiguous" complaint.
 */
export function parseFlags<const T extends FlagSpec>(
  command: string,
  args: string[],
  options: T,
  positionals: {
    min?: number;
    max?: number;
    names?: readonly string[];
    /** Flags whose empty value the command explains itself, knowing what the value must be. */
    emptyExplained?: readonly string[];
  } = {},
) {
  const accepted = withAliases(options);
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(args, accepted),
      // The aliases are moved to their flags below: the values keep T's shape.
      options: accepted as T,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw new UsageError(
      `${
        parseProblem(error, Object.keys(options))
      }; see trace ${command} --help`,
    );
  }
  refuseRepeatedValues(command, parsed.tokens, accepted);
  mergeAliases(command, parsed.values as Record<string, unknown>, options);
  refuseEmptyValues(command, parsed.values, positionals.emptyExplained ?? []);
  const count = parsed.positionals.length;
  if (!(parsed.values as { help?: boolean }).help) {
    if (positionals.min !== undefined && count < positionals.min) {
      const missing = positionals.names?.slice(count, positionals.min);
      throw new UsageError(
        `Missing ${
          missing?.length ? missing.join(" and ") : "argument"
        }; see trace ${command} --help`,
      );
    }
    if (count > (positionals.max ?? 0)) {
      throw new UsageError(
        `Unexpected argument ${
          quoteValue(parsed.positionals[positionals.max ?? 0]!)
        }; see trace ${command} --help`,
      );
    }
  }
  return parsed;
}

/** `options` with each {@link FLAG_ALIASES} spelling of a declared flag declared alike. */
function withAliases(options: FlagSpec): FlagSpec {
  const accepted: FlagSpec = { ...options };
  for (const [alias, flag] of Object.entries(FLAG_ALIASES)) {
    const spec = options[flag];
    if (spec && !(alias in options)) {
      accepted[alias] = { type: spec.type, multiple: spec.multiple ?? false };
    }
  }
  return accepted;
}

/** Moves an alias's value to its flag; both given is refused, whichever came first. */
function mergeAliases(
  command: string,
  values: Record<string, unknown>,
  options: FlagSpec,
): void {
  for (const [alias, flag] of Object.entries(FLAG_ALIASES)) {
    if (!options[flag] || alias in options || !(alias in values)) continue;
    if (values[flag] !== undefined) {
      throw new UsageError(
        `--${flag} and --${alias} are the same flag: give one of them; see trace ${command} --help`,
      );
    }
    values[flag] = values[alias];
    delete values[alias];
  }
}

/** The parser's refusal in one line, naming a flag whose value is missing as such. */
function parseProblem(error: unknown, flags: readonly string[]): string {
  const message = (error as Error).message.split("\n")[0] ?? "";
  // "Unknown option '--confg'": a near flag is named, as a near command is.
  const unknown = /^Unknown option '--([\w-]+)'/.exec(message);
  const near = unknown ? closestName(unknown[1]!, flags) : undefined;
  if (near !== undefined) {
    return `Unknown option '--${unknown![1]}' (did you mean --${near}?)`;
  }
  // "Option '--limit <value>' argument missing", or "… is ambiguous." when
  // the next word is another flag (`--limit --json`).
  const missing =
    /^Option '(-[\w-]+)(?: <value>)?' argument (?:missing|is ambiguous)/
      .exec(message);
  if (missing) return `${missing[1]} needs a value`;
  // The parser quotes what was typed in single quotes, a pasted blob too.
  return message.replace(/\. To specify.*$/, "").replace(/\.$/, "")
    .replace(
      /'([^']*)'/g,
      (quoted, typed: string) =>
        typed.length > ECHO_LIMIT ? quoteValue(typed) : quoted,
    );
}

/**
 * Refuses a single-value flag given twice (`--target a --target b`): the
 * parser would keep the last one, and which one the user meant is a guess.
 * Flags declared `multiple` collect every value; a repeated boolean changes
 * nothing.
 */
function refuseRepeatedValues(
  command: string,
  tokens: readonly ParsedToken[],
  options: FlagSpec,
): void {
  const seen = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== "option" || token.value === undefined) continue;
    const spec = options[token.name];
    if (spec?.type !== "string" || spec.multiple) continue;
    const first = seen.get(token.name);
    if (first === undefined) {
      seen.set(token.name, token.value);
      continue;
    }
    throw new UsageError(
      `--${token.name} given twice (${quoteValue(first)}, ${
        quoteValue(token.value)
      }): give it once; see trace ${command} --help`,
    );
  }
}

/**
 * Refuses a flag given an empty string (`--data-dir ""`, often an unset
 * shell variable): taking it as "not given" would fall back to a default
 * the user did not choose, such as the real data directory.
 */
function refuseEmptyValues(
  command: string,
  values: object,
  explained: readonly string[],
): void {
  for (const [name, value] of Object.entries(values)) {
    if (explained.includes(name)) continue;
    const items = Array.isArray(value) ? value : [value];
    if (items.some((item) => item === "")) {
      throw new UsageError(
        `--${name} was given an empty value; give one, or leave the flag out; see trace ${command} --help`,
      );
    }
  }
}

function joinNegativeValues(args: string[], options: FlagSpec): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const spec = arg.startsWith("--") ? options[arg.slice(2)] : undefined;
    if (spec?.type === "string" && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

/** What a whole-number flag accepts: bounds (inclusive) and a unit for the message. */
export interface IntegerRule {
  min: number;
  max?: number;
  unit?: string;
}

/**
 * Parses a whole-number flag value; `undefined` stays `undefined`. Anything
 * but plain decimal digits within the bounds is a usage error naming the flag
 * and what it accepts.
 */
export function parseIntegerFlag(
  flag: string,
  value: string | undefined,
  rule: IntegerRule,
): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{16,}$/.test(value)) {
    throw new UsageError(
      `--${flag} ${clipValue(value)} is too large; ${
        rule.max === undefined
          ? "give at most 15 digits"
          : `give a number from ${rule.min} to ${rule.max}`
      }`,
    );
  }
  const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  if (!(n >= rule.min && n <= max)) {
    const range = rule.max === undefined
      ? `≥ ${rule.min}`
      : `from ${rule.min} to ${rule.max}`;
    throw new UsageError(
      `--${flag} must be a whole number${
        rule.unit ? ` of ${rule.unit}` : ""
      } ${range}, got ${quoteValue(value)}`,
    );
  }
  return n;
}

/** Prints a command's help text; returns exit code 0. */
export function showHelp(
  io: { out(text: string): void },
  text: string,
): number {
  io.out(text);
  return 0;
}

/** An id flag's value (`--user`, `--default-application`), checked as an event would carry it. */
export function idFlag(flag: string, value: string): string {
  const parsed = v.safeParse(OpaqueIdSchema, value);
  if (!parsed.success) {
    throw new UsageError(`--${flag} ${parsed.issues[0]?.message}`);
  }
  return parsed.output;
}

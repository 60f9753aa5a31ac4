/**
 * Environment variables set but empty, refused in one place: a CI variable
 * that did not expand must not silently pick the default (a database, a
 * data directory, an open API). On/off variables (`TRACE_UI_READ_ONLY`,
 * `TRACE_MCP_ALLOW_TRACE_QUERIES`) take `true` or `false` too, and unset
 * for the default.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import { quoteValue } from "./echo.ts";

/**
 * The value of the variable `name`, `undefined` when unset; set but empty
 * throws a `ConfigError` saying so, then `advice`.
 */
export function nonEmptyEnv(
  name: string,
  value: string | undefined,
  advice: string,
): string | undefined {
  if (value !== "") return value;
  throw new ConfigError(`${name} is set but empty; ${advice}`);
}

/**
 * Reads the switch `name`: `true` is on, `false` or unset is off; throws a
 * `ConfigError` for an empty or any other value, whose advice ends with
 * "set it to true to `onMeans`".
 */
export function readEnvSwitch(
  name: string,
  value: string | undefined,
  onMeans: string,
): boolean {
  nonEmptyEnv(name, value, "set it to true or false, or unset it");
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  throw new ConfigError(
    `${name} must be true or false, got ${
      quoteValue(value)
    }; set it to true to ${onMeans}`,
  );
}

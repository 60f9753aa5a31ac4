/**
 * On/off environment variables (`TRACE_UI_READ_ONLY`,
 * `TRACE_MCP_ALLOW_TRACE_QUERIES`): `true` or `false`, and unset for the
 * default. Set but empty is refused, as an empty credential is: a CI
 * variable that did not expand must not silently pick the default.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import { quoteValue } from "./echo.ts";

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
  if (value === "") {
    throw new ConfigError(
      `${name} is set but empty; set it to true or false, or unset it`,
    );
  }
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  throw new ConfigError(
    `${name} must be true or false, got ${
      quoteValue(value)
    }; set it to true to ${onMeans}`,
  );
}

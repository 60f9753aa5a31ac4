/**
 * The transport a run, plan or cleanup reaches a target's adapter with,
 * and what its refusal of an unset token says to do for that target.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import { TokenEnvUnsetError } from "../errors.ts";
import { createHttpTransport } from "../http/strict_client.ts";
import type { TargetRef } from "../runner/report.ts";

/**
 * The strict HTTP transport of `target`'s config. A registered target keeps
 * the config it was registered with, so when its token's variable is unset
 * the remedy is to set it, not to remove `token_env` from a file.
 */
export function targetTransport(
  config: StagingConfig,
  target: TargetRef | null,
  env?: (name: string) => string | undefined,
): StagingTransport {
  try {
    return createHttpTransport(config, env ? { env } : {});
  } catch (error) {
    if (
      error instanceof TokenEnvUnsetError && target?.source === "registered"
    ) {
      throw error.withRemedy((shown) =>
        `set ${shown} to the staging token where this command runs (target "${target.id}" keeps the config it was registered with; to run without a token, register a config without token_env under a new id)`
      );
    }
    throw error;
  }
}

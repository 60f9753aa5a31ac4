/**
 * Defence-in-depth checks of a staging target just before use: the config
 * schema enforces the same rules, but a transport may be built from other
 * code paths, and these are the rules that keep secrets on the wire safe.
 *
 * @module
 */

import { ConfigError, TokenEnvUnsetError } from "../errors.ts";
import { clipValue } from "../echo.ts";
import { isLoopbackHost } from "../loopback.ts";
import { traceCredentialProblem } from "../trace_credentials.ts";

/** Re-checks base_url: http(s) only, no credentials, query or fragment, plain HTTP only to loopback. */
export function checkBaseUrl(baseUrl: string): URL {
  const url = URL.parse(baseUrl);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ConfigError(
      "Invalid base_url: must be an absolute http:// or https:// URL",
    );
  }
  if (
    url.username || url.password || url.search || url.hash ||
    baseUrl.includes("#") || baseUrl.includes("?")
  ) {
    throw new ConfigError(
      "Invalid base_url: must not contain credentials, a query or a fragment",
    );
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(
      `Refusing plain HTTP to ${url.hostname}: http:// is allowed only for loopback hosts; use https://`,
    );
  }
  return url;
}

/** Reads the bearer token once; refuses it for plain HTTP and when unset or empty. */
export function readToken(
  name: string | undefined,
  secure: boolean,
  env: (name: string) => string | undefined,
): string | undefined {
  if (name === undefined) return undefined;
  // The name comes from a config file: a pasted blob must not bury the sentence.
  const shown = clipValue(name);
  if (!secure) {
    throw new ConfigError(
      `Refusing token_env ${shown}: a bearer token is sent only over https://`,
    );
  }
  // A config stored before configs were refused for this reaches here.
  const credential = traceCredentialProblem(name);
  if (credential !== null) {
    throw new ConfigError(
      `Refusing token_env ${shown}: ${credential} (a registered target keeps its config: register the config under a new id with its own variable, then retire this one)`,
    );
  }
  const token = env(name);
  if (!token) {
    throw new TokenEnvUnsetError(name);
  }
  if (!/^[!-~]+$/.test(token)) {
    throw new ConfigError(
      `Cannot use bearer token from ${shown}: it contains spaces or non-ASCII characters; set the variable to the token alone`,
    );
  }
  return token;
}

/**
 * The {@link StagingTransport} for real staging apps: each operation is one
 * strict HTTP/1.1 POST (see `http1.ts`) whose 200 answer must be a strict JSON
 * object. The rules of the staging contract are enforced here again, even
 * though config validation already checked them, because this is the last
 * place before bytes leave the machine: plain HTTP only to loopback, TLS
 * always verified, the bearer token only over HTTPS, no redirects, no proxies,
 * no retries. Error messages carry status codes and what to fix
 * (`_answer.ts`), never a response body; of a redirect's Location only its
 * origin and path. The token is replaced in everything handed to the runner
 * (`_redact.ts`), since an adapter may echo it back.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import {
  type Operation,
  OPERATIONS,
  ProtocolError,
  type StagingTransport,
} from "../contract/protocol.ts";
import {
  http1Post,
  type Http1PostOptions,
  type Http1Response,
} from "./http1.ts";
import { fail, interpretAnswer } from "./_answer.ts";
import { closeQuietly, openConnection } from "./_connect.ts";
import { Deadline } from "./_deadline.ts";
import { checkBaseUrl, readToken } from "./_target.ts";
import { tokenRedactor } from "./_redact.ts";

/** Options for {@link createHttpTransport}. */
export interface HttpTransportOptions {
  /** Environment lookup for `token_env`; defaults to `Deno.env.get`. */
  env?: (name: string) => string | undefined;
  /** Extra trusted root certificates (PEM), for tests; verification itself is never off. */
  caCerts?: string[];
}

const encoder = new TextEncoder();

/** Creates the HTTP transport for a validated staging config; reads the token once. */
export function createHttpTransport(
  config: Pick<StagingConfig, "base_url" | "token_env">,
  options: HttpTransportOptions = {},
): StagingTransport {
  const base = checkBaseUrl(config.base_url);
  const secure = base.protocol === "https:";
  const token = readToken(
    config.token_env,
    secure,
    options.env ?? ((name) => Deno.env.get(name)),
  );
  const headers: Array<[string, string]> = [
    ["Content-Type", "application/json"],
    ["Accept", "application/json"],
    // The body is checked byte for byte: no compression to undo first.
    ["Accept-Encoding", "identity"],
    ["Connection", "close"],
  ];
  const tokenSent = token !== undefined && secure;
  if (tokenSent) headers.push(["Authorization", `Bearer ${token}`]);
  const redact = tokenRedactor(tokenSent ? token : undefined);
  const basePath = base.pathname.replace(/\/+$/, "");
  return {
    async post(op, body, { timeoutMs, signal }) {
      if (!OPERATIONS.includes(op)) {
        throw new TypeError(`Unknown staging operation ${JSON.stringify(op)}`);
      }
      const url = new URL(base);
      url.pathname = `${basePath}/${op}`;
      try {
        const response = await send(op, {
          url,
          headers,
          body: encoder.encode(JSON.stringify(body)),
          timeoutMs,
          signal,
          caCerts: options.caCerts,
          requireLoopbackPeer: !secure,
        });
        return redact.answer(interpretAnswer(op, response, {
          url,
          tokenEnv: config.token_env,
          tokenSent,
        }));
      } catch (error) {
        throw redact.error(error);
      }
    },
    async probe({ timeoutMs, signal }) {
      // The connect path every request takes, stopped before a byte is sent;
      // a Ctrl-C calls it off at once rather than after its whole budget.
      const conn = await openConnection({
        url: base,
        caCerts: options.caCerts,
        requireLoopbackPeer: !secure,
      }, new Deadline(timeoutMs, signal));
      closeQuietly(conn);
    },
  };
}

async function send(
  op: Operation,
  request: Http1PostOptions,
): Promise<Http1Response> {
  try {
    return await http1Post(request);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    throw fail(op, error.failure, error.message, error.status, error);
  }
}

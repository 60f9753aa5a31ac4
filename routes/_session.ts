/**
 * Signed, expiring session cookies and the CSRF tokens tied to them.
 *
 * A cookie is `base64url(claims).base64url(HMAC-SHA256(key, claims))`. The
 * claims name the operator, a random session id and the expiry; never a role
 * or a scope, which are resolved on each request (`principal.ts`). The key
 * is random per app instance and never leaves memory: restarting the server
 * signs everyone out, the same as the one-time login token it replaces, and a
 * copied data directory grants no session. The CSRF token of a session is an
 * HMAC of its id under the same key with another label (a synchronizer token
 * the server need not store). Signing out revokes the session id in memory
 * until it would have expired. A session is also bound to the credential it
 * was opened with (an HMAC of the account's credential digest), so rotating
 * an account's token ends the sessions opened with the old one.
 *
 * @module
 */

import { timingSafeEqual } from "hono/utils/buffer";
import { decodeBase64Url, encodeBase64Url } from "hono/utils/encode";

/** Unpadded base64url: cookie-safe without escaping. */
function base64Url(bytes: Uint8Array<ArrayBuffer>): string {
  return encodeBase64Url(bytes.buffer).replace(/=+$/, "");
}

/** How long a session lasts unless configured otherwise (12 hours). */
export const DEFAULT_SESSION_TTL_SECONDS = 12 * 60 * 60;

/** What a session cookie says. */
export interface SessionClaims {
  /** Format version. */
  v: 1;
  /** Random session id (CSRF tokens and revocation hang on it). */
  sid: string;
  /** The operator name. */
  op: string;
  /** Issued and expiry times, epoch seconds. */
  iat: number;
  exp: number;
  /** HMAC of the credential the session was opened with. */
  cr?: string;
}

/** Options for {@link createSessionSigner}. */
export interface SessionSignerOptions {
  ttlSeconds?: number;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
}

/** Issues and checks session cookies and their CSRF tokens. */
export interface SessionSigner {
  readonly ttlSeconds: number;
  /** A signed cookie value for `operator` (bound to `credential` when given), with its claims. */
  issue(
    operator: string,
    credential?: string,
  ): Promise<{ value: string; claims: SessionClaims }>;
  /** Whether a session was opened with `credential`. */
  checkCredential(claims: SessionClaims, credential: string): Promise<boolean>;
  /** The claims of a valid, unexpired, unrevoked cookie value, else `null`. */
  verify(value: string): Promise<SessionClaims | null>;
  /** The CSRF token of session `sid`. */
  csrfToken(sid: string): Promise<string>;
  /** Whether `given` is the CSRF token of session `sid`. */
  checkCsrf(sid: string, given: string): Promise<boolean>;
  /** Ends a session before its expiry. */
  revoke(claims: SessionClaims): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A signer with a fresh random key. */
export function createSessionSigner(
  options: SessionSignerOptions = {},
): SessionSigner {
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_SESSION_TTL_SECONDS;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 60) {
    throw new RangeError("Session lifetime must be a whole number >= 60 s");
  }
  const now = options.now ?? Date.now;
  const key = crypto.subtle.generateKey(
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign", "verify"],
  );
  const mac = async (label: string, data: string) =>
    new Uint8Array(
      await crypto.subtle.sign("HMAC", await key, encoder.encode(label + data)),
    );
  // Revoked session ids until they would have expired anyway.
  const revoked = new Map<string, number>();
  const seconds = () => Math.floor(now() / 1000);
  return {
    ttlSeconds,
    async issue(operator, credential) {
      const iat = seconds();
      const claims: SessionClaims = {
        v: 1,
        sid: randomId(),
        op: operator,
        iat,
        exp: iat + ttlSeconds,
      };
      if (credential !== undefined) {
        claims.cr = base64Url(await mac("cred\0", credential));
      }
      const body = base64Url(encoder.encode(JSON.stringify(claims)));
      const signature = base64Url(await mac("session\0", body));
      return { value: `${body}.${signature}`, claims };
    },
    async verify(value) {
      const [body, signature, extra] = value.split(".");
      if (!body || !signature || extra !== undefined) return null;
      const given = decodeOrNull(signature);
      if (!given) return null;
      const valid = await crypto.subtle.verify(
        "HMAC",
        await key,
        given,
        encoder.encode("session\0" + body),
      );
      if (!valid) return null;
      const claims = parseClaims(body);
      if (!claims || claims.exp <= seconds()) return null;
      return revoked.has(claims.sid) ? null : claims;
    },
    async checkCredential(claims, credential) {
      const expected = base64Url(await mac("cred\0", credential));
      return claims.cr !== undefined &&
        await timingSafeEqual(claims.cr, expected);
    },
    async csrfToken(sid) {
      return base64Url(await mac("csrf\0", sid));
    },
    async checkCsrf(sid, given) {
      const expected = base64Url(await mac("csrf\0", sid));
      return given !== "" && await timingSafeEqual(given, expected);
    },
    revoke(claims) {
      const at = seconds();
      for (const [sid, exp] of revoked) if (exp <= at) revoked.delete(sid);
      revoked.set(claims.sid, claims.exp);
    },
  };
}

/** 128 random bits, base64url. */
export function randomId(bytes = 16): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function decodeOrNull(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    return decodeBase64Url(text);
  } catch {
    return null;
  }
}

/** Claims were signed by this process, so a shape check is enough. */
function parseClaims(body: string): SessionClaims | null {
  const bytes = decodeOrNull(body);
  if (!bytes) return null;
  try {
    const value = JSON.parse(decoder.decode(bytes));
    const ok = value?.v === 1 && typeof value.sid === "string" &&
      typeof value.op === "string" && Number.isInteger(value.iat) &&
      Number.isInteger(value.exp) &&
      (value.cr === undefined || typeof value.cr === "string");
    return ok ? value as SessionClaims : null;
  } catch {
    return null;
  }
}

/** The request's session cookie: its name on the origin the browser is on, and the value sent under it. */
export interface SessionCookie {
  name: string;
  /** `undefined` when the request carries no such cookie. */
  value: string | undefined;
}

/**
 * The one-time login of a server without operator accounts: a random token,
 * printed once as a login URL (the way notebook servers do), that opens one
 * browser session and is spent by it.
 *
 * @module
 */

import { timingSafeEqual } from "hono/utils/buffer";
import { randomId } from "./_session.ts";

/** The outcome of presenting a token to {@link OneTimeLogin.consume}. */
export type LoginTokenCheck = "accepted" | "used" | "wrong";

/** A single-use login token (pass it to `createApp` as `oneTimeLogin`). */
export interface OneTimeLogin {
  /** The login path with the token, e.g. `/login?token=…`. */
  readonly path: string;
  /** Whether the token has been spent. */
  readonly used: boolean;
  /** The full login URL on `origin` (e.g. `http://127.0.0.1:8788`). */
  url(origin: string): string;
  /** `accepted` the first time the right token is shown, `used` after that. */
  consume(token: string): Promise<LoginTokenCheck>;
}

/** Creates a one-time login with 256 random bits (or `token`, for tests). */
export function createOneTimeLogin(token: string = randomId(32)): OneTimeLogin {
  let used = false;
  const path = `/login?token=${encodeURIComponent(token)}`;
  return {
    path,
    get used() {
      return used;
    },
    url: (origin) => origin.replace(/\/+$/, "") + path,
    async consume(given) {
      if (!(await timingSafeEqual(given, token))) return "wrong";
      // Checked and set with no await in between: two racing visits get one session.
      if (used) return "used";
      used = true;
      return "accepted";
    },
  };
}

/**
 * The example host program (`fixtures/host/`) listening on an ephemeral
 * loopback port for browser tests, and signing in through its login form
 * as one of its example operators.
 */

import type { Page } from "playwright-core";
import {
  type HostFixture,
  type HostFixtureOptions,
  type Operator,
  tokenOf,
  withHost,
} from "../operator_support.ts";
import { withServer } from "../_helpers.ts";

/** The example host, listening. */
export interface Served extends HostFixture {
  /** `http://127.0.0.1:PORT` */
  origin: string;
}

/** Runs `fn` with the example host on an ephemeral loopback port. */
export async function withHostServer(
  options: HostFixtureOptions,
  fn: (served: Served) => Promise<void>,
): Promise<void> {
  await withHost(
    options,
    (host) =>
      withServer(host.app.fetch, ({ url }) => fn({ ...host, origin: url })),
  );
}

/**
 * Signs `operator` (an example operator, or any account's token) in through
 * the login form; lands on `path` (or, without one, wherever sign-in sends a
 * visitor who asked for nothing).
 */
export async function signIn(
  page: Page,
  origin: string,
  operator: Operator | { token: string },
  path?: string,
): Promise<void> {
  await page.goto(
    path === undefined
      ? `${origin}/login`
      : `${origin}/login?next=${encodeURIComponent(path)}`,
  );
  await page.getByLabel("Operator token").fill(
    typeof operator === "string" ? tokenOf(operator) : operator.token,
  );
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) =>
    url.pathname !== "/login" &&
    (path === undefined || `${url}` === `${origin}${path}`)
  );
}

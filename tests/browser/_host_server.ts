/**
 * The example host program (`fixtures/host/`) listening on an ephemeral
 * loopback port for browser tests, and signing in through its login form
 * as one of its example operators.
 */

import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { listAudit } from "../../lib/auth/mod.ts";
import {
  ANSWER_PREVIEW,
  type HostFixture,
  type HostFixtureOptions,
  type Operator,
  tokenOf,
  withHost,
} from "../operator_support.ts";
import { withServer } from "../_helpers.ts";
import type { OpenPage } from "./_harness.ts";
import { postFromPage } from "./_page.ts";

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

/**
 * Forges a reveal of `evt-answer` from inside `viewer`'s signed-in page
 * (with its CSRF token) and checks that it is refused with 403, shows no
 * content, and is audited as a refused reveal by viewer-1.
 */
export async function assertForgedRevealRefused(
  viewer: OpenPage,
  host: Served,
  reason: string,
): Promise<void> {
  const forged = await postFromPage(viewer.page, "/traces/reveal", {
    agent_id: "support-bot",
    root_trace_id: "root-1",
    event_id: "evt-answer",
    application_id: "app-1",
    reason,
  }, "json");
  assert.equal(forged.status, 403);
  assert.ok(!forged.text.includes(ANSWER_PREVIEW));
  viewer.allowed.push("status of 403");
  const [refusal] = await listAudit(host.db, { operator: "viewer-1" });
  assert.equal(refusal?.action, "content.reveal");
  assert.equal(refusal?.outcome, "refused");
}

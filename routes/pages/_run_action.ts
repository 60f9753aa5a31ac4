/**
 * Whether the request may start runs from a run page: its `runs.write`
 * capability (role, tenant binding, read-only mode) on a server that has a
 * job manager. A role that may never run sees no control even in
 * read-only mode, where the capability names the mode first.
 *
 * @module
 */

import type { Context } from "hono";
import { decide } from "../../lib/auth/mod.ts";
import { capabilityOf } from "../access.ts";
import { type RunAction, runAction } from "../ui/components/action_form.tsx";
import type { UiEnv } from "../ui/context.ts";

/** The run action of this request. */
export function runActionOf(c: Context<UiEnv>, canStart: boolean): RunAction {
  const byRole = decide(c.get("principal"), "runs.write");
  if (!byRole.allowed) {
    return {
      allowed: false,
      reason: byRole.reason,
      message: byRole.message,
    };
  }
  return runAction(capabilityOf(c, "runs.write"), canStart);
}

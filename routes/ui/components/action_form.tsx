/**
 * A button that changes something (starts a run, replays a regression): a
 * POST form carrying the session's CSRF token, so it works without script
 * and a cross-site page cannot submit it. Whether it shows comes from the
 * principal's capability for `runs.write` (`capabilityOf` in
 * `routes/access.ts`), which the page's data carries as a {@link RunAction}:
 * roles that may not run never see it; in read-only mode, or on a server
 * that cannot start runs, it stays on the page disabled with the reason.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { ActionCapability } from "../../../lib/auth/mod.ts";
import { shownString } from "./shown_text.tsx";

/** Whether this request may start runs here, and why not. */
export interface RunAction {
  allowed: boolean;
  /** `role` and `tenant` hide the controls; anything else shows them disabled. */
  reason: string | null;
  message: string | null;
}

/** The run action of a request: its `runs.write` capability, on a server that can run jobs. */
export function runAction(
  capability: ActionCapability,
  canStart: boolean,
): RunAction {
  if (!capability.allowed) {
    return {
      allowed: false,
      reason: capability.reason,
      message: capability.message,
    };
  }
  if (!canStart) {
    return {
      allowed: false,
      reason: "no_jobs",
      message:
        "This server was started without a job manager, so it cannot start runs; use trace serve, or trace external-run",
    };
  }
  return { allowed: true, reason: null, message: null };
}

/** Whether the controls show at all (enabled or disabled with a reason). */
export function showsRunControls(action: RunAction): boolean {
  return action.allowed ||
    (action.reason !== "role" && action.reason !== "tenant");
}

/** A tooltip as the page shows text (it may name a target or regression id). */
function tooltip(text: string | null | undefined): string | undefined {
  return text ? shownString(text) : undefined;
}

/** A one-button POST form, disabled with its reason when the action is not allowed. */
export const ActionForm: FC<{
  action: string;
  csrf: string | null;
  label: string;
  run: RunAction;
  /** Says what the button does, for screen readers and on hover. */
  title?: string;
  primary?: boolean;
}> = ({ action, csrf, label, run, title, primary }) => {
  if (!showsRunControls(run)) return null;
  return (
    <form class="inline-form action-form" method="post" action={action}>
      {csrf ? <input type="hidden" name="_csrf" value={csrf} /> : null}
      <button
        type="submit"
        class={primary ? "button--primary" : undefined}
        title={tooltip(run.allowed ? title : run.message)}
        disabled={!run.allowed}
      >
        {label}
      </button>
      {run.allowed
        ? null
        : (
          <span class="meta" data-disabled-reason={run.reason ?? ""}>
            {` ${run.message ?? ""}`}
          </span>
        )}
    </form>
  );
};

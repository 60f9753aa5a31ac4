/**
 * A button that changes something (starts a run, replays a regression): a
 * POST form carrying the session's CSRF token, so it works without script
 * and a cross-site page cannot submit it. Shown only to roles that may run.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { Principal, Role } from "../../principal.ts";

const RUNNING_ROLES: readonly Role[] = ["operator", "admin"];

/** Whether `principal` may start runs and replays. */
export function mayRun(principal: Principal | null): boolean {
  return principal !== null && RUNNING_ROLES.includes(principal.role);
}

/** A one-button POST form. */
export const ActionForm: FC<{
  action: string;
  csrf: string | null;
  label: string;
  /** Says what the button does, for screen readers and on hover. */
  title?: string;
  primary?: boolean;
}> = ({ action, csrf, label, title, primary }) => (
  <form class="inline-form action-form" method="post" action={action}>
    {csrf ? <input type="hidden" name="_csrf" value={csrf} /> : null}
    <button
      type="submit"
      class={primary ? "button--primary" : undefined}
      title={title}
    >
      {label}
    </button>
  </form>
);

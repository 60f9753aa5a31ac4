/**
 * Controls of operator actions (reveal, replay draft, artifact lookup,
 * account resolution), each rendered enabled or disabled from the
 * principal's capability (`capabilityOf(c, action)` in `routes/access.ts`).
 * A disabled control stays on the page with the sentence saying why (role,
 * tenant binding, read-only mode, or a hook the host did not configure), so
 * nobody has to guess; the server refuses a forged request all the same.
 *
 * Pages place them where the evidence is: the reveal form beside an event
 * that has a preview, the replay-draft form beside a root or turn, the
 * artifact lookup beside a resource ref, the account form above a search.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { type ActionCapability, EMAIL_PATTERN } from "../../../lib/auth/mod.ts";
import { Shown } from "./shown_text.tsx";

/** Why a control is disabled, or nothing when it is enabled. */
export const CapabilityNote: FC<{
  capability: ActionCapability;
  /** What is not done, leading the reason ("Current state is not looked up here"). */
  lead?: string;
}> = ({ capability, lead }) =>
  capability.allowed
    ? null
    : (
      <p class="meta" data-disabled-reason={capability.reason ?? ""}>
        {lead ? `${lead}: ` : ""}
        <Shown text={capability.message ?? ""} />
        {capability.reason === "hook_missing"
          ? "; whoever runs this server can add it (Operators, in the README)"
          : ""}
      </p>
    );

/** The hidden fields every form of a signed-in session carries. */
const Csrf: FC<{ csrf: string | null }> = ({ csrf }) =>
  csrf ? <input type="hidden" name="_csrf" value={csrf} /> : null;

/** Hidden inputs for the defined values of `fields`. */
function hiddenFields(
  fields: Record<string, string | null | undefined>,
): Child {
  return Object.entries(fields).map(([name, value]) =>
    value === null || value === undefined
      ? null
      // Rendered once on the server: a `key` would only be printed as an attribute.
      // deno-lint-ignore jsx-key
      : <input type="hidden" name={name} value={value} />
  );
}

/** Which event a reveal names. */
export interface RevealTarget {
  agent_id: string;
  root_trace_id: string;
  event_id: string;
  application_id?: string | undefined;
  /** Prefills the turn field (when the page knows which event is meant). */
  turn_id?: string | null | undefined;
}

/**
 * The reveal form: posts agent, root and event id with a stated reason to
 * `POST /traces/reveal`; optional turn and run narrow an id that names
 * more than one event. The content comes back once, on the answer page.
 */
export const RevealForm: FC<{
  target: RevealTarget;
  capability: ActionCapability;
  csrf: string | null;
  /** A form id unique on the page (several events may each have one). */
  id: string;
}> = ({ target, capability, csrf, id }) => {
  const off = !capability.allowed;
  return (
    <form
      method="post"
      action="/traces/reveal"
      class="stack"
      data-control="reveal"
      aria-describedby={`${id}-about`}
    >
      <Csrf csrf={csrf} />
      {hiddenFields({
        agent_id: target.agent_id,
        root_trace_id: target.root_trace_id,
        event_id: target.event_id,
        application_id: target.application_id,
      })}
      <p class="meta" id={`${id}-about`}>
        Shows this event's stored content preview once, to you, and records who,
        when and why in the audit trail. Nothing is cached.
      </p>
      <div>
        <label for={`${id}-reason`}>Reason (required, recorded)</label>
        <input
          type="text"
          id={`${id}-reason`}
          name="reason"
          required
          minlength={3}
          maxlength={500}
          autocomplete="off"
          placeholder="Ticket or case, e.g. SUP-1234"
          disabled={off}
        />
      </div>
      <div>
        <label for={`${id}-turn`}>Turn (optional)</label>
        <input
          type="text"
          id={`${id}-turn`}
          name="turn_id"
          value={target.turn_id ?? undefined}
          autocomplete="off"
          disabled={off}
        />
      </div>
      <div>
        <label for={`${id}-run`}>Run (optional)</label>
        <input
          type="text"
          id={`${id}-run`}
          name="run_id"
          autocomplete="off"
          disabled={off}
        />
      </div>
      <div>
        <button
          type="submit"
          class={off ? undefined : "button--primary"}
          disabled={off}
        >
          Reveal content
        </button>
      </div>
      <CapabilityNote capability={capability} />
    </form>
  );
};

/** Which trace a replay draft covers. */
export interface ReplayTarget {
  agent_id: string;
  root_trace_id: string;
  turn_id?: string | null | undefined;
  run_id?: string | null | undefined;
  application_id?: string | undefined;
  /** The user the selection is bound to (`null`: anonymous evidence only); absent leaves it open. */
  user_id?: string | null | undefined;
}

/** Why the replay control of `label` is disabled: the planner's refusal `why`. */
export function noReplayDraft(label: string, why: string): string {
  return `No replay draft of ${label} can be made: ${why}.`;
}

/** The fields a replay selection posts (and its plan link carries). */
function replayFields(
  target: ReplayTarget,
): Record<string, string | undefined> {
  const { user_id, ...rest } = target;
  const fields: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (typeof value === "string") fields[key] = value;
  }
  if (user_id === null) fields.anonymous = "true";
  else if (user_id !== undefined) fields.user_id = user_id;
  return fields;
}

/** The query string of a replay selection (for the plan link). */
export function replayQuery(target: ReplayTarget): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(replayFields(target))) {
    if (value !== undefined) params.set(key, value);
  }
  return params.toString();
}

/**
 * The replay-draft form: posts the selection to `POST /traces/replays`,
 * which stores an inert draft (execution disabled) and runs nothing. The
 * plan link shows the same frozen refs without storing anything.
 */
export const ReplayDraftForm: FC<{
  /** The selection, or `null` when this view cannot name one (see `unavailable`). */
  target: ReplayTarget | null;
  draft: ActionCapability;
  plan: ActionCapability;
  csrf: string | null;
  id: string;
  /** What the selection is, in words ("turn t-1", "the whole root"). */
  label: string;
  /**
   * Why no draft can be made here (shown with the control disabled): the
   * view names no selection (`target` is `null`), or the events it read
   * already show that the plan would be refused.
   */
  unavailable?: string | null | undefined;
}> = ({ target, draft, plan, csrf, id, label, unavailable }) => {
  const blocked = target === null || Boolean(unavailable);
  const off = !draft.allowed || blocked;
  return (
    <form
      method="post"
      action="/traces/replays"
      class="stack"
      data-control="replay-draft"
    >
      <Csrf csrf={csrf} />
      {target ? hiddenFields(replayFields(target)) : null}
      <div>
        <label for={`${id}-reason`}>Note for reviewers (optional)</label>
        <input
          type="text"
          id={`${id}-reason`}
          name="reason"
          maxlength={500}
          autocomplete="off"
          disabled={off}
        />
      </div>
      <div>
        <button type="submit" disabled={off}>
          Create replay draft of <Shown text={label} />
        </button>{" "}
        {plan.allowed && target && !blocked
          ? (
            <a href={`/traces/replay-plan.json?${replayQuery(target)}`}>
              Replay plan (JSON, nothing stored)
            </a>
          )
          : null}
      </div>
      <CapabilityNote capability={draft} />
      {unavailable
        ? (
          <p
            class="meta"
            data-disabled-reason={target === null ? "selection" : "incomplete"}
          >
            <Shown text={unavailable} />
          </p>
        )
        : null}
    </form>
  );
};

/** A link to the current state of a resource through the artifact resolver, or why not. */
export const ArtifactLookup: FC<{
  ref: { type: string; id: string; version?: string | undefined };
  capability: ActionCapability;
  application_id?: string | undefined;
}> = ({ ref, capability, application_id }) => {
  if (!capability.allowed) {
    return (
      <span
        class="meta"
        data-control="artifact"
        data-disabled-reason={capability.reason ?? ""}
        title={capability.message ?? ""}
      >
        lookup off
      </span>
    );
  }
  const params = new URLSearchParams({ type: ref.type, id: ref.id });
  if (ref.version !== undefined) params.set("version", ref.version);
  if (application_id !== undefined) {
    params.set("application_id", application_id);
  }
  // The script shows the answer beside the link; without it the link opens the JSON.
  return (
    <a
      data-control="artifact"
      data-artifact-lookup=""
      href={`/traces/artifact.json?${params}`}
    >
      current state
    </a>
  );
};

/**
 * The account lookup form: posts `{email}` to `POST /traces/account/resolve`
 * (never in a URL) and answers the opaque user id to search by.
 */
export const AccountResolveForm: FC<{
  capability: ActionCapability;
  csrf: string | null;
}> = ({ capability, csrf }) => {
  const off = !capability.allowed;
  return (
    <form
      method="post"
      action="/traces/account/resolve"
      class="account-form"
      data-control="account-resolve"
    >
      <Csrf csrf={csrf} />
      <label for="account-email">Customer email</label>
      <div class="finder-form__row">
        {
          /* The server's own rule, not type="email": browsers refuse
            addresses with non-ASCII local parts that the resolver may know. */
        }
        <input
          type="text"
          inputmode="email"
          pattern={EMAIL_PATTERN}
          title="an email address: something@somewhere, no spaces"
          id="account-email"
          name="email"
          autocomplete="off"
          spellcheck={false}
          required
          disabled={off}
        />
        <button type="submit" disabled={off}>Look up user id</button>
      </div>
      <p class="meta">
        Resolves a customer's email to the user id to search by. The email is
        sent once to the host's identity resolver; Trace never stores, logs or
        puts it in a URL.
      </p>
      <CapabilityNote capability={capability} />
    </form>
  );
};

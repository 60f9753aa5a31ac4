/**
 * The pages the operator forms answer with (a browser posting a form gets a
 * page; scripts posting JSON get JSON): revealed content, a created replay
 * draft, a resolved account. Each says what was recorded in the audit
 * trail; the revealed content is shown once and never cached.
 *
 * @module
 */

import type { Context } from "hono";
import type { FC } from "hono/jsx";
import type {
  AuditEntry,
  PlannedRef,
  ReplayDraft,
  ReplayPlan,
} from "../lib/auth/mod.ts";
import type { TraceEvent } from "../lib/obs/mod.ts";
import type { PreviewContent } from "../lib/obs/query/mod.ts";
import { CopyId } from "./ui/components/copy_id.tsx";
import { type Column, DataTable } from "./ui/components/data_table.tsx";
import { KeyValue } from "./ui/components/key_value.tsx";
import { Shown, ShownCode } from "./ui/components/shown_text.tsx";
import type { SiteInfo, UiEnv } from "./ui/context.ts";
import { renderPage } from "./ui/layout.tsx";
import { eventPageHref, inspectHref } from "./ui/trace_params.ts";

/** Renders `body` in the shell for the request's principal. */
export function operatorPage(
  c: Context<UiEnv>,
  site: SiteInfo,
  title: string,
  body: unknown,
  status: 200 | 201 = 200,
): Response | Promise<Response> {
  return renderPage(
    c,
    {
      title,
      path: c.req.path,
      principal: c.get("principal"),
      csrf: c.get("csrf"),
      site,
    },
    body as never,
    status,
  );
}

const AuditNote: FC<{ entry: AuditEntry }> = ({ entry }) => (
  <p class="meta" data-audit-entry={entry.entry_id}>
    Recorded in the audit trail as entry {entry.seq} (
    <code>{entry.entry_id}</code>); <code>trace audit list</code> shows it.
  </p>
);

/** The answer of a reveal: the content, once. */
export const RevealedBody: FC<{
  event: TraceEvent;
  preview: PreviewContent;
  entry: AuditEntry;
}> = ({ event, preview, entry }) => (
  <div class="stack">
    <h1>Revealed content</h1>
    <p class="notice" role="status">
      Shown once, for this request: the page is not cached and the UI keeps no
      copy. To hide it, follow Back to the event below, which does not reveal it
      again; every reveal is recorded as its own audit entry.
    </p>
    <KeyValue
      items={[
        {
          term: "Event",
          value: <CopyId value={event.event_id} label="event id" />,
        },
        {
          term: "Application",
          value: <ShownCode text={event.application_id} />,
        },
        { term: "Agent", value: <ShownCode text={event.agent_id ?? "none"} /> },
        { term: "Root", value: <ShownCode text={event.root_trace_id} /> },
        { term: "Turn", value: <ShownCode text={event.turn_id ?? "none"} /> },
        {
          term: "Preview",
          value: `${preview.chars} characters${
            preview.truncated ? ", cut at 16,000 when stored" : ""
          }`,
        },
      ]}
    />
    <pre
      class="command"
      data-revealed
      data-hide-href={eventPageHref(event)}
    ><code><Shown text={preview.content} multiline /></code></pre>
    <AuditNote entry={entry} />
    <p>
      <a href={eventPageHref(event)}>Back to the event</a>
    </p>
  </div>
);

const REF_COLUMNS: readonly Column<PlannedRef>[] = [
  { header: "Type", cell: (ref) => <ShownCode text={ref.type} /> },
  { header: "Id", rowHeader: true, cell: (ref) => <ShownCode text={ref.id} /> },
  { header: "Version", cell: (ref) => ref.version ?? "unversioned" },
  { header: "Took part as", cell: (ref) => ref.roles.join(", ") },
];

/** The answer of a replay draft: what was frozen, and that nothing ran. */
export const DraftBody: FC<{
  draft: ReplayDraft;
  plan: ReplayPlan;
  entry: AuditEntry;
}> = ({ draft, plan, entry }) => (
  <div class="stack">
    <h1>Replay draft created</h1>
    <p class="notice" role="status">
      Inert: execution is disabled, network and side effects are off, and
      running it needs a sandbox and an operator's approval. Creating it ran
      nothing.
    </p>
    <KeyValue
      items={[
        {
          term: "Draft",
          value: <CopyId value={draft.draft_id} label="draft id" />,
        },
        {
          term: "Application",
          value: <ShownCode text={plan.selection.application_id} />,
        },
        { term: "Agent", value: <ShownCode text={plan.selection.agent_id} /> },
        {
          term: "Root",
          value: <ShownCode text={plan.selection.root_trace_id} />,
        },
        {
          term: "Turn",
          value: plan.selection.turn_id
            ? <ShownCode text={plan.selection.turn_id} />
            : "every turn of the root",
        },
        { term: "Events", value: String(plan.events) },
        {
          term: "Evidence fingerprint",
          value: (
            <CopyId value={plan.evidence_fingerprint} label="fingerprint" />
          ),
        },
        { term: "Execution", value: "disabled (execution_enabled: false)" },
      ]}
    />
    <DataTable
      id="draft-refs"
      caption={`Frozen resource refs (${plan.refs.length}, ${plan.unversioned_refs} unversioned)`}
      columns={REF_COLUMNS}
      rows={plan.refs}
      empty={{ title: "No resource refs in this selection" }}
    />
    <AuditNote entry={entry} />
    <p class="actions">
      <a href={inspectHref(plan.selection, new URLSearchParams())}>
        Back to the inspection
      </a>
      <a href="/traces/replays.json">Stored drafts (JSON)</a>
    </p>
  </div>
);

/** The answer of an account lookup: the user id to search by, never the email. */
export const ResolvedBody: FC<{
  userId: string;
  applicationId: string | null;
  find: string;
  entry: AuditEntry;
}> = ({ userId, applicationId, find, entry }) => (
  <div class="stack">
    <h1>Account resolved</h1>
    <KeyValue
      items={[
        { term: "User id", value: <CopyId value={userId} label="user id" /> },
        {
          term: "Application",
          value: applicationId
            ? <ShownCode text={applicationId} />
            : "not given",
        },
      ]}
    />
    <p>
      <a href={find}>Find this user's trace events</a>
    </p>
    <AuditNote entry={entry} />
  </div>
);

/**
 * The body of a run's detail, shared by the page (`/runs/:id`) and the
 * standalone HTML file: the verdict and why first, then the findings with
 * the samples that prove them, the timeline of the deletion window, what
 * to do next, the cleanup, the requests, the run's facts, and the raw
 * report last. The page adds live progress, actions and downloads; the
 * file is read offline, so it shows absolute times and no links that need
 * the server.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import type { RunReport } from "../../lib/runner/report.ts";
import { StatusBadge } from "./components/badge.tsx";
import {
  CleanupPanel,
  IssuedPanel,
  LaterCleanupNote,
} from "./components/cleanup_panel.tsx";
import { Command } from "./components/command.tsx";
import { CopyId } from "./components/copy_id.tsx";
import { EmptyState } from "./components/empty_state.tsx";
import { asSentence, FindingsList } from "./components/findings_list.tsx";
import { KeyValue } from "./components/key_value.tsx";
import { RawJson } from "./components/raw_json.tsx";
import { RequestWaterfall } from "./components/request_waterfall.tsx";
import { RunTimeline, SampleTable } from "./components/run_timeline.tsx";
import { PageHead, Section } from "./components/section.tsx";
import { Time } from "./components/time.tsx";
import { plural } from "./trace_words.ts";
import { formatDuration, formatUtc } from "./format.ts";
import {
  compareHref,
  runDownloads,
  runEventsHref,
  runHref,
  targetHref,
} from "./links.ts";
import { progressWords, type RunDetail } from "./run_view.ts";
import { unregisteredTarget } from "./run_words.ts";
import { withDataFlags } from "./printed_command.ts";

/** How the body is shown: on the server's page, or as a file. */
export interface RunBodyView {
  mode: "page" | "document";
  /** Epoch ms the page is rendered at (relative times on the page). */
  now: number;
  /** The page's JSON twin (page mode). */
  jsonHref?: string;
  /** Forms for actions on this run (page mode, roles that may run). */
  actions?: Child;
  /** The server's data flags for printed commands (`""` in a document; see {@link withDataFlags}). */
  dataFlags: string;
}

/** The status word of the run's badge. */
export function runStatusWord(detail: RunDetail): string {
  return detail.state === "running" ? "running" : detail.verdict;
}

/**
 * The id of the element that holds a running run's page: the browser
 * script replaces it on each poll with the page as the server renders it
 * then (`data-live-region`), so the headline, the ids issued so far and the
 * requests follow the run, not only the progress texts.
 */
export const RUN_LIVE_REGION = "run-live";

/** The run detail body. */
export const RunBody: FC<{ detail: RunDetail; view: RunBodyView }> = (
  { detail, view },
) =>
  view.mode === "page" && detail.state === "running"
    ? (
      <div id={RUN_LIVE_REGION}>
        <RunParts detail={detail} view={view} />
      </div>
    )
    : <RunParts detail={detail} view={view} />;

const RunParts: FC<{ detail: RunDetail; view: RunBodyView }> = (
  { detail, view },
) => {
  const report = detail.report;
  return (
    <>
      <RunHead detail={detail} view={view} />
      {detail.kept_in !== "ledger" && detail.state === "completed"
        ? (
          <p class="notice not-in-ledger" role="note">
            {asSentence(detail.note ?? "this run is not in the ledger")}
          </p>
        )
        : null}
      {view.actions ? <div class="actions">{view.actions}</div> : null}
      {detail.state === "running"
        ? <ProgressSection detail={detail} view={view} />
        : null}
      {report
        ? <ReportSections report={report} detail={detail} view={view} />
        : null}
      {!report && detail.checkpoint
        ? (
          <Section
            id="cleanup"
            title={detail.state === "running"
              ? "Issued so far"
              : "Issued and not cleaned up"}
            intro="The checkpoint lists every synthetic id before its ingest request, so nothing the run wrote goes unlisted."
          >
            <LaterCleanup detail={detail} view={view} />
            <IssuedPanel
              runId={detail.run_id}
              dataFlags={view.dataFlags}
              checkpoint={detail.checkpoint}
              running={detail.state === "running"}
              laterCleanup={detail.later_cleanup}
              unregistered={unregisteredTarget(
                detail.target_registered,
                detail.target.id,
                detail.checkpoint.namespaces,
              )}
            />
          </Section>
        )
        : null}
      <RequestsSection detail={detail} view={view} />
      {view.mode === "page" ? <DownloadsSection detail={detail} /> : null}
      <RawJson
        value={view.mode === "page" ? detail : detail.report ?? detail}
        {...(view.jsonHref ? { href: view.jsonHref } : {})}
      />
    </>
  );
};

const When: FC<{ iso: string; view: RunBodyView }> = ({ iso, view }) =>
  view.mode === "page"
    ? <Time iso={iso} now={view.now} />
    : <time datetime={iso}>{formatUtc(iso)}</time>;

const RunHead: FC<{ detail: RunDetail; view: RunBodyView }> = (
  { detail, view },
) => {
  const report = detail.report;
  const reference = detail.kind === "reference";
  const first = detail.next_steps[0];
  return (
    <PageHead
      eyebrow={reference
        ? "Reference run"
        : detail.regression_id
        ? `Replay of ${detail.regression_id}`
        : "Deletion contract run"}
      title={reference
        ? `System ${detail.reference?.system ?? detail.target.id}`
        : `Target ${detail.target.id}`}
      status={runStatusWord(detail)}
      reason={
        <>
          {detail.headline}
          {detail.recurrence_sentence
            ? <>{" "}{detail.recurrence_sentence}</>
            : null}
          {detail.reference
            ? <ReferenceNote judged={detail.reference} />
            : null}
          {first && detail.verdict !== "PASS"
            ? (
              <>
                {" "}
                <strong>Next:</strong> {first.text}{" "}
                {detail.next_steps.length > 1 || first.command
                  ? <a href="#next">What to do next</a>
                  : null}
              </>
            )
            : null}
        </>
      }
      meta={
        <>
          <CopyId value={detail.run_id} label="run id" />
          {" · started "}
          <When iso={detail.started_at} view={view} />
          {report
            ? ` · took ${formatDuration(report.timing.elapsed_seconds * 1000)}${
              reference ? " of virtual time" : ""
            }`
            : ""}
          {detail.state === "interrupted" ? " · interrupted" : ""}
          {detail.state === "failed" ? " · stopped with an error" : ""}
          {view.mode === "page" && !reference
            ? (
              <>
                {" · "}
                <a class="nowrap" href={targetHref(detail.target.id)}>
                  target page
                </a>
              </>
            )
            : null}
        </>
      }
    />
  );
};

/** What a later `trace external-cleanup` of the run found, above the run's own cleanup. */
const LaterCleanup: FC<{ detail: RunDetail; view: RunBodyView }> = (
  { detail, view },
) => {
  const later = detail.later_cleanup;
  if (!later) return null;
  return (
    <LaterCleanupNote
      later={later}
      when={<When iso={later.finished_at} view={view} />}
    />
  );
};

const ReferenceNote: FC<{ judged: NonNullable<RunDetail["reference"]> }> = (
  { judged },
) => {
  if (judged.matches === null) {
    return (
      <>
        {" "}This build does not know the system, so nothing is expected of it.
      </>
    );
  }
  return judged.matches
    ? <>{` As expected of this system (${judged.expected}).`}</>
    : (
      <>
        {" "}
        <strong>MISMATCH:</strong>
        {` expected ${judged.expected}, observed ${judged.observed} (${
          judged.mismatches.join("; ")
        }): the checker got a known system wrong, which is a bug in Trace.`}
      </>
    );
};

const ProgressSection: FC<{ detail: RunDetail; view: RunBodyView }> = (
  { detail, view },
) => {
  const p = detail.progress;
  return (
    <Section id="progress" title="Progress">
      <div class="panel live-panel">
        <p
          class="live-status"
          data-live-url={view.mode === "page"
            ? `${runHref(detail.run_id)}.json`
            : undefined}
          data-live-state="running"
          data-live-interval="1000"
          data-live-region={view.mode === "page" ? RUN_LIVE_REGION : undefined}
        >
          <span data-live-text="progress_text.status">
            {detail.progress_text?.status ?? progressWords(p)}
          </span>
        </p>
        {p
          ? (
            <KeyValue
              items={[
                {
                  term: "Phase",
                  value: <span data-live-text="progress.phase">{p.phase}</span>,
                },
                {
                  term: "Requests sent",
                  value: (
                    <span class="num" data-live-text="progress.requests">
                      {String(p.requests)}
                    </span>
                  ),
                },
                {
                  term: "Last sample",
                  value: (
                    <span data-live-text="progress_text.sample">
                      {detail.progress_text?.sample ?? ""}
                    </span>
                  ),
                },
              ]}
            />
          )
          : (
            <p>
              Another process is running this run (its checkpoint's writer is
              alive); this server has no progress to show.
            </p>
          )}
        <p class="meta no-js-note">
          This page updates itself while the run goes on; without JavaScript,
          reload it to see how far the run got.
        </p>
      </div>
    </Section>
  );
};

const ReportSections: FC<
  { report: RunReport; detail: RunDetail; view: RunBodyView }
> = ({ report, detail, view }) => (
  <>
    <Section id="findings" title="Findings">
      {report.findings.length > 0
        ? <FindingsList findings={report.findings} />
        : (
          <EmptyState title="No findings">
            The report holds no finding.
          </EmptyState>
        )}
    </Section>
    <Section
      id="window"
      title="Deletion window"
      intro={windowIntro(report)}
    >
      {report.samples.length > 0
        ? (
          <div class="stack">
            <RunTimeline report={report} />
            <SampleTable report={report} />
          </div>
        )
        : <EmptyState title="No samples">{noSamplesReason(report)}</EmptyState>}
    </Section>
    {detail.next_steps.length > 0
      ? (
        <Section id="next" title="What to do next">
          <ol class="next-steps">
            {detail.next_steps.map((step) => (
              <li>
                <p>{step.text}</p>
                {view.mode === "page" && step.links
                  ? (
                    <p class="meta">
                      {step.links.map((link, i) => (
                        <>
                          {i === 0 ? "See " : " · "}
                          <a href={link.href}>{link.label}</a>
                        </>
                      ))}
                    </p>
                  )
                  : null}
                {step.command
                  ? (
                    <Command
                      text={withDataFlags(step.command, view.dataFlags)}
                    />
                  )
                  : null}
              </li>
            ))}
          </ol>
          {view.mode === "page" && detail.regression_id && detail.compare_with
            ? (
              <p>
                <a href={compareHref(detail.compare_with, detail.run_id)}>
                  Compare with the run this regression was saved from
                </a>
              </p>
            )
            : null}
        </Section>
      )
      : null}
    <Section id="cleanup" title="Cleanup">
      <LaterCleanup detail={detail} view={view} />
      <CleanupPanel
        report={report}
        dataFlags={view.dataFlags}
        laterCleanup={detail.later_cleanup}
        unregistered={unregisteredTarget(
          detail.target_registered,
          detail.target.id,
          report.namespaces,
        )}
      />
    </Section>
    <Section id="facts" title="Run facts">
      <RunFacts report={report} detail={detail} />
    </Section>
  </>
);

/**
 * What the window section holds. A run without samples never reached its
 * window (a failed baseline, an interruption, an unacknowledged deletion):
 * its intro states the contract without claiming that anything was deleted,
 * and the empty state under it says why.
 */
function windowIntro(report: RunReport): string {
  const t = report.timing;
  const documents = plural(t.document_count, "document");
  if (report.samples.length === 0) {
    const lead = report.deletion === null
      ? "Nothing was deleted, so no store was sampled"
      : "No store was sampled";
    return `${lead}: the contract deletes ${documents}, then samples every store every ${t.sample_interval_seconds} s through a ${t.deletion_window_seconds} s window.`;
  }
  return `${documents} deleted, then every store sampled every ${t.sample_interval_seconds} s until a sample started at or after the ${t.deletion_window_seconds} s window. The final sample decides: anything left there is a FAIL; anything that cleared before it is a transient residual.`;
}

function noSamplesReason(report: RunReport): string {
  if (report.state === "interrupted") {
    return "The run was interrupted before its deletion window began.";
  }
  if (!report.baseline.ok) {
    return `The baseline was not established, so nothing was deleted: ${
      report.baseline.problems.join("; ") || "see the report"
    }.`;
  }
  if (report.deletion && !report.deletion.acknowledged) {
    return "The deletion was not acknowledged, so there was no window to observe.";
  }
  return "The report holds no samples.";
}

const RunFacts: FC<{ report: RunReport; detail: RunDetail }> = (
  { report },
) => {
  const t = report.timing;
  return (
    <KeyValue
      items={[
        {
          term: "Target",
          value: (
            <>
              <code>{report.target.id}</code> {report.kind === "reference"
                ? "(in process, virtual time)"
                : <code>{report.target.base_url}</code>}
            </>
          ),
        },
        {
          term: "Contract",
          value: <code>{report.protocol.revision}</code>,
          hint:
            `${t.document_count} document(s), window ${t.deletion_window_seconds} s, a sample every ${t.sample_interval_seconds} s`,
        },
        {
          term: "Requests",
          value:
            `${report.requests.total} sent, ${report.requests.failed} failed`,
        },
        {
          term: "Deletion",
          value: report.deletion
            ? report.deletion.acknowledged
              ? `acknowledged ${
                report.deletion.acknowledged_at_seconds?.toFixed(2) ?? "?"
              } s into the run`
              : "NOT acknowledged"
            : "not sent",
        },
        {
          term: "Baseline",
          value: <StatusBadge status={report.baseline.ok ? "ok" : "failing"} />,
          hint: report.baseline.problems.join("; ") || undefined,
        },
        {
          term: "Namespaces",
          value: (
            <>
              <CopyId value={report.namespaces.test} label="test namespace" />
              {" "}
              <CopyId
                value={report.namespaces.control}
                label="control namespace"
              />
            </>
          ),
        },
        {
          term: "Config digest",
          value: <code>{report.config_digest}</code>,
        },
      ]}
    />
  );
};

const RequestsSection: FC<{ detail: RunDetail; view: RunBodyView }> = (
  { detail, view },
) => {
  const requests = detail.requests;
  const namespace = detail.report?.namespaces.test ??
    detail.checkpoint?.namespaces.test;
  // Only a run with events in the index gets the link: one still running
  // has none yet, and the empty state below says so.
  const events = view.mode === "page" && namespace !== undefined &&
      requests.status === "recorded"
    ? (
      <p>
        <a href={runEventsHref(detail.run_id, namespace)}>
          This run's trace events
        </a>{" "}
        <span class="meta">
          (the index's own record of every phase, request, sample and finding)
        </span>
      </p>
    )
    : null;
  return (
    <Section
      id="requests"
      title="Requests"
      intro="Every request the run sent, by phase, from the run's trace events: operation, start, duration and outcome. Answers and error bodies are never kept."
    >
      {requests.status === "recorded"
        ? <RequestWaterfall requests={requests} />
        : (
          <EmptyState
            title={requests.status === "no_index"
              ? "This database has no observability index"
              : requests.status === "unreadable"
              ? "The run's trace events could not be read"
              : "No trace events of this run"}
            command={requests.status === "no_index"
              ? withDataFlags("trace obs init", view.dataFlags)
              : undefined}
          >
            {requests.status === "unreadable"
              ? requests.problem ?? ""
              : requests.status === "no_index"
              ? "Runs write their requests into the observability index; create it, and later runs will show their requests here."
              : noEventsText(detail)}
          </EmptyState>
        )}
      {events}
    </Section>
  );
};

/**
 * Why the index holds no event of a run, from what the page knows: a run
 * writes its events once it ends, so one still running has none yet, and
 * one that stopped without a report may never have written them.
 */
function noEventsText(detail: RunDetail): string {
  const when =
    "A run writes its trace events into the observability index once it ends";
  if (detail.report) {
    return `${when}; this run's are not there (tracing was off, or the write failed). Its report above is complete.`;
  }
  if (detail.state === "running") return `${when}: this one is still running.`;
  const left =
    `${when}; the index holds none of this run's, and no report of it was kept`;
  return detail.checkpoint
    ? `${left}: what its checkpoint recorded (above) is all there is.`
    : `${left}.`;
}

const DownloadsSection: FC<{ detail: RunDetail }> = ({ detail }) =>
  detail.report
    ? (
      <Section id="downloads" title="Downloads">
        <ul class="downloads">
          {runDownloads(detail.run_id, detail.kept_in).map((d) => (
            <li>
              <a href={d.href} download="">{d.label}</a>{" "}
              <span class="meta">{d.hint}</span>
            </li>
          ))}
        </ul>
      </Section>
    )
    : null;

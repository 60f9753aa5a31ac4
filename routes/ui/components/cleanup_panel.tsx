/**
 * What a run left behind: after a finished run, its cleanup (what was
 * deleted and acknowledged, what each namespace still counts, whether the
 * markers were still retrievable) and what to do about it; for a run that
 * stopped without a report, the ids its checkpoint says it issued.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { STORES } from "../../../lib/contract/protocol.ts";
import type { CleanupDelete, RunReport } from "../../../lib/runner/report.ts";
import type { RunView } from "../../../lib/runs/mod.ts";
import {
  cleanupStep,
  type LaterCleanupOutcome,
  STORE_LABEL,
  storeShort,
  type UnregisteredTarget,
} from "../run_words.ts";
import { StatusBadge } from "./badge.tsx";
import { STACK_TABLE, stackLabel } from "./data_table.tsx";
import { CopyId } from "./copy_id.tsx";
import { Shown } from "./shown_text.tsx";
import { Command } from "./command.tsx";
import { withDataFlags } from "../printed_command.ts";

/**
 * What a later `trace external-cleanup` of a run found, in the words the
 * run page and the compare page share; `when` is its finish time as the
 * page shows times. "Complete" only when it queried the markers: one that
 * read the inventories only (a run recorded before markers were kept) is
 * "inventories clear".
 */
export const LaterCleanupNote: FC<
  {
    later: Pick<
      NonNullable<RunView["cleanup"]>,
      "cleanup_id" | "cleanup_complete" | "markers_queried" | "problems"
    >;
    when: Child;
  }
> = ({ later, when }) => (
  <p class="notice later-cleanup" role="note">
    <StatusBadge status={laterStatus(later)} />{" "}
    {`A later cleanup (${later.cleanup_id}) `}
    {when}
    {!later.cleanup_complete
      ? <Shown text={`: still incomplete (${later.problems.join("; ")}).`} />
      : later.markers_queried
      ? " deleted every id this run issued: every store of both namespaces read 0 and neither marker was retrievable, so nothing synthetic is left."
      : " deleted every id this run issued and every store of both namespaces read 0. It could not query the markers (this run's were not kept), so whether the records can still be retrieved was not checked."}
  </p>
);

function laterStatus(
  later: Pick<
    NonNullable<RunView["cleanup"]>,
    "cleanup_complete" | "markers_queried"
  >,
): string {
  if (!later.cleanup_complete) return "incomplete";
  return later.markers_queried ? "complete" : "inventories clear";
}

/** The cleanup of a finished run. */
export const CleanupPanel: FC<
  {
    report: RunReport;
    /** The latest `trace external-cleanup` of the run, if one ran: it decides the next step. */
    laterCleanup?: LaterCleanupOutcome | null;
    /** Set when no cleanup command can reach the run's target. */
    unregistered?: UnregisteredTarget | null;
    /** The server's data flags for the printed command (`""` in a document). */
    dataFlags?: string;
  }
> = (
  { report, laterCleanup = null, unregistered, dataFlags = "" },
) => {
  const c = report.cleanup;
  const reference = report.kind === "reference";
  const acked = c.deletes.filter((d) => d.acknowledged).length;
  return (
    <div class="stack">
      <p class="status-line">
        <StatusBadge status={c.cleanup_complete ? "complete" : "incomplete"} />
        {" "}
        {c.cleanup_complete
          ? "Every store of both namespaces read 0 and neither marker was retrievable: nothing synthetic is left."
          : leftSentence(report)}
      </p>
      <div class="table-wrap">
        <table id="cleanup-table" class={STACK_TABLE}>
          <caption class="sr-only">
            What each namespace still held after cleanup
          </caption>
          <thead>
            <tr>
              <th scope="col">Namespace</th>
              {STORES.map((store) => (
                <th scope="col" class="num">{storeShort(store)} left</th>
              ))}
              <th scope="col">Marker</th>
              <th scope="col">Deletion</th>
            </tr>
          </thead>
          <tbody>
            {(["test", "control"] as const).map((role) => {
              const left = c.remaining[role];
              const seen = c.marker_seen[role];
              const dels = c.deletes.filter((d) => d.namespace === role);
              return (
                <tr>
                  <th scope="row" class="namespace-cell">
                    {role}{" "}
                    <CopyId
                      value={report.namespaces[role]}
                      label={`${role} namespace`}
                    />
                  </th>
                  {STORES.map((store) => {
                    const n = left?.[store];
                    return (
                      <td
                        class={n ? "num is-left" : "num"}
                        {...stackLabel(`${storeShort(store)} left`)}
                      >
                        {n === undefined || n === null ? "?" : String(n)}
                      </td>
                    );
                  })}
                  <td {...stackLabel("Marker")}>
                    {seen === null
                      ? "unknown"
                      : seen
                      ? "STILL RETRIEVABLE"
                      : "gone"}
                  </td>
                  <td {...stackLabel("Deletion")}>{deletionCell(dels)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p class="meta">
        {`${acked} of ${c.deletes.length} deletion${
          c.deletes.length === 1 ? "" : "s"
        } acknowledged; ${c.polls} poll${c.polls === 1 ? "" : "s"} over ${
          c.elapsed_seconds.toFixed(2)
        } s (at most ${c.limit_seconds} s${
          c.interrupted ? ", shortened by an interrupt" : ""
        }).`}
      </p>
      <ProblemList problems={c.problems} />
      {!c.cleanup_complete
        ? reference
          ? (
            <p>
              This reference system lived in memory only, so nothing remains
              outside this process; the incomplete cleanup is part of what the
              system is known to do.
            </p>
          )
          : laterCleanup?.cleanup_complete
          ? null
          : (
            <NextStepBox
              runId={report.run_id}
              unregistered={unregistered ?? null}
              laterCleanup={laterCleanup}
              dataFlags={dataFlags}
            />
          )
        : null}
    </div>
  );
};

/** Cleanup problems as a list; nothing when there are none. */
export const ProblemList: FC<{ problems: readonly string[] }> = (
  { problems },
) => {
  if (problems.length === 0) return null;
  const items: Child[] = [];
  for (const problem of problems) {
    items.push(
      <li>
        <Shown text={problem} />
      </li>,
    );
  }
  return <ul class="problems">{items}</ul>;
};

function leftSentence(report: RunReport): string {
  const parts: string[] = [];
  for (const role of ["test", "control"] as const) {
    const left = report.cleanup.remaining[role];
    const stores = STORES.filter((s) => (left?.[s] ?? 0) > 0)
      .map((s) => `${left![s]} in the ${STORE_LABEL[s]}`);
    if (report.cleanup.marker_seen[role]) stores.push("a retrievable marker");
    if (stores.length > 0) {
      parts.push(
        `${stores.join(", ")} of namespace ${report.namespaces[role]}`,
      );
    }
  }
  return parts.length > 0
    ? `Synthetic records are still there: ${parts.join("; ")}.`
    : "Cleanup could not confirm that every synthetic record is gone.";
}

const NextStepBox: FC<
  {
    runId: string;
    unregistered: UnregisteredTarget | null;
    laterCleanup: LaterCleanupOutcome | null;
    dataFlags: string;
  }
> = ({ runId, unregistered, laterCleanup, dataFlags }) => {
  const step = cleanupStep(runId, { unregistered, laterCleanup });
  return (
    <div class="next-step">
      <p>{step.text}</p>
      {step.command
        ? <Command text={withDataFlags(step.command, dataFlags)} />
        : null}
    </div>
  );
};

/** What a run without a finished report issued, and may have left behind. */
export const IssuedPanel: FC<
  {
    runId: string;
    checkpoint: NonNullable<RunView["checkpoint"]>;
    running: boolean;
    /** The latest `trace external-cleanup` of the run, if one ran: once one completed there is no command to offer. */
    laterCleanup?: LaterCleanupOutcome | null;
    /** Set when no cleanup command can reach the run's target. */
    unregistered?: UnregisteredTarget | null;
    /** The server's data flags for the printed command (`""` in a document). */
    dataFlags?: string;
  }
> = (
  {
    runId,
    checkpoint,
    running,
    laterCleanup = null,
    unregistered,
    dataFlags = "",
  },
) => {
  const issued = checkpoint.issued.test.length +
    checkpoint.issued.control.length;
  return (
    <div class="stack">
      <p class="status-line">
        <StatusBadge status={running ? "running" : "unknown"} /> {running
          ? `${issued} synthetic id${
            issued === 1 ? "" : "s"
          } issued so far; cleanup runs when the window ends.`
          : `The run stopped before its cleanup was recorded: ${issued} synthetic id${
            issued === 1 ? "" : "s"
          } it issued may remain.`}
      </p>
      <div class="table-wrap">
        <table class={STACK_TABLE}>
          <caption class="sr-only">Synthetic ids issued per namespace</caption>
          <thead>
            <tr>
              <th scope="col">Namespace</th>
              <th scope="col" class="num">Ids issued</th>
              <th scope="col">Ids</th>
            </tr>
          </thead>
          <tbody>
            {(["test", "control"] as const).map((role) => (
              <tr>
                <th scope="row" class="namespace-cell">
                  {role}{" "}
                  <CopyId
                    value={checkpoint.namespaces[role]}
                    label={`${role} namespace`}
                  />
                </th>
                <td class="num" {...stackLabel("Ids issued")}>
                  {checkpoint.issued[role].length}
                </td>
                <td {...stackLabel("Ids")}>
                  <details>
                    <summary>show</summary>
                    <code class="id-list">
                      {checkpoint.issued[role].join(" ")}
                    </code>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {running || laterCleanup?.cleanup_complete ? null : (
        <NextStepBox
          runId={runId}
          unregistered={unregistered ?? null}
          laterCleanup={laterCleanup}
          dataFlags={dataFlags}
        />
      )}
    </div>
  );
};

/** A namespace's deletions: ids, acknowledgement, and repeats for records that came back. */
function deletionCell(dels: CleanupDelete[]): string {
  const first = dels[0];
  if (!first) return "not sent";
  const acked = dels.every((d) => d.acknowledged);
  return `${first.ids} id${first.ids === 1 ? "" : "s"}, ${
    acked ? "acknowledged" : "NOT acknowledged"
  }${
    dels.length > 1
      ? `; deleted ${dels.length} times (records came back after a clean poll)`
      : ""
  }`;
}

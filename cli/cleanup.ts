/** `trace external-cleanup RUN_ID`: remove what a run left behind, and record it. */

import { terminalSafe } from "../lib/display.ts";
import { dbLocation } from "../lib/db.ts";
import { formatHead } from "../lib/ledger/head.ts";
import { validateRunId } from "../lib/ledger/runs.ts";
import { capitalized } from "../lib/words.ts";
import { type CleanupRecord, laterCleanupOf } from "../lib/ledger/cleanups.ts";
import {
  type CleanupOutcome,
  type CleanupPoll,
  cleanUpRun,
  stillServedAdvice,
} from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { leftoversPollLine } from "./_progress.ts";
import { dataFlagsOf, withFlagsAfter } from "./_run_outputs.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";

const HELP =
  `Usage: trace external-cleanup RUN_ID [--json] [--data-dir DIR] [--db URL]

For a run whose cleanup was incomplete, or that was interrupted before it
could clean up, deletes every synthetic id it issued (from its report, else
its checkpoint) in both of its namespaces through the run's target adapter,
polls both namespaces through the target's deletion window, and appends the
outcome to the ledger as a cleanup entry linked to the run. A run that needs
nothing (its cleanup completed, a later cleanup did, or it is a reference run,
whose system lived in memory) is left alone.

The adapter is reached first: when it cannot be, the command stops at once
with one line (exit 2) and nothing is deleted or recorded. Each poll reads
both inventories and queries the run's two markers (kept in its report and
checkpoint) as the run's own cleanup does: "complete" means every deletion
was acknowledged, every store of both namespaces read 0 and neither marker
was retrievable; a marker still retrievable (a soft delete, a stale answer
cache) leaves it incomplete. A run recorded before its markers were kept has
its inventories read only, and its best outcome is "inventories clear"
(retrieval not checked): check it with the application's own tools when the
run found the marker retrievable. A marker still retrievable means the
application still serves the run's text after deleting it: fix its delete path
(or remove the records with the application's own tools), then run this again
to confirm. Polls are numbered from 1; a poll that starts past the window
because the requests before it took longer is the last, and says so.

Deletions are counted as the run's own cleanup counts them: delete requests
(one per namespace, one more each time its records came back) acknowledged of
those sent, then the ids deleted of those issued. --json prints
{status: "complete" | "inventories_clear" | "incomplete", record,
delete_requests, delete_requests_acknowledged, deleted_ids, ids_to_delete,
recorded} or {status: "not_needed", run_id, reason}.

Ctrl-C (or SIGTERM) stops it within the smaller of the window and 30 s, plus
1 s for each request still to send (at most 6 s, 4 s without markers): a
request still unanswered then is called off instead of waiting out its
timeout_seconds, a deletion not sent yet still goes out (given at least 1 s),
both namespaces are read once more, and the outcome is recorded. A deletion
called off counts as not acknowledged, so that cleanup is incomplete. A second
Ctrl-C exits at once with code 130.

Exit codes: 0 complete, inventories clear, or nothing to clean; 2 records may
remain or still be served, or the run cannot be cleaned (still running,
unknown, target not registered, adapter unreachable, no ledger at
--data-dir); 130 after a second Ctrl-C.
`;

/** `trace external-cleanup`: delete a run's leftover synthetic records. */
export const externalCleanup: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-cleanup",
    args,
    DATA_FLAGS,
    { min: 1, max: 1, names: ["RUN_ID"] },
  );
  if (values.help) return showHelp(io, HELP);
  const runId = validateRunId(positionals[0]!);
  return await withDataContext(
    values,
    io,
    { write: true, existingLedger: true },
    async ({ db, dataDir }) => {
      let outcome: CleanupOutcome;
      try {
        outcome = await cleanUpRun(db, runId, {
          dataDir,
          env: io.env,
          onStart: () =>
            io.setExitNote?.(
              `the cleanup of run ${runId} stopped before it was recorded, so synthetic records may remain; run trace external-cleanup ${runId}${
                dataFlagsOf(values)
              } again`,
            ),
          onPoll: (poll) => io.err(leftoversPollLine(poll)),
          onInterrupt: (seconds) =>
            io.err(
              `cleanup interrupted: stopping within ${seconds} s (requests unanswered at the smaller of the window and 30 s are called off, and each one still to send gets 1 s); the outcome so far is recorded (Ctrl-C again exits at once)\n`,
            ),
          ...(io.interrupted ? { signal: io.interrupted } : {}),
        });
      } finally {
        io.setExitNote?.(null);
      }
      if (values.json) printJson(io, outcome);
      else {
        io.out(renderOutcome(outcome, dbLocation(db), dataFlagsOf(values)));
      }
      if (outcome.status === "not_needed") return 0;
      if ("error" in outcome.recorded) {
        io.err(
          `warning: Cannot record the cleanup in the ledger (${outcome.recorded.error}); its outcome is only on stdout\n`,
        );
      }
      return outcome.status === "incomplete" ? 2 : 0;
    },
  );
};

/** `outcome` as text; `dataFlags` repeat `--data-dir` / `--db` in the command it names. */
function renderOutcome(
  outcome: CleanupOutcome,
  location: string,
  dataFlags: string,
): string {
  if (outcome.status === "not_needed") {
    return `Nothing to clean for run ${outcome.run_id}: ${outcome.reason}\n`;
  }
  const { record, recorded } = outcome;
  const c = record.outcome;
  const lines = [
    `Cleanup of run ${record.run_id} (ids from its ${record.ids_from}): ${
      STATUS_WORDS[outcome.status]
    }`,
    `  namespaces ${record.namespaces.test} and ${record.namespaces.control}`,
    `  ${deletionWords(outcome)}; ${c.polls} ${
      record.markers_queried
        ? "poll(s) of inventory and markers"
        : "inventory poll(s)"
    } over ${c.elapsed_seconds.toFixed(2)} s`,
    ...c.problems.map((p) => `  - ${p}`),
    record.markers_queried
      ? `  markers: queried in both namespaces at every poll; ${
        markersAtLastPoll(c.marker_seen)
      }`
      // A run recorded before its markers were kept leaves nothing to query.
      : "  markers: not queried (this run's markers were not kept), so whether the records can still be retrieved was not checked: an answer cache or a soft delete that still serves deleted text is not seen here",
  ];
  if ("seq" in recorded) {
    lines.push(
      `  recorded as ${record.cleanup_id} in ${
        terminalSafe(location)
      } (entry ${recorded.seq}); head ${formatHead(recorded.head)}`,
    );
  }
  if (!c.cleanup_complete) {
    const command = `trace external-cleanup ${record.run_id}`;
    lines.push(
      `  ${withFlagsAfter(incompleteAdvice(record), command, dataFlags)}`,
    );
  }
  return lines.join("\n") + "\n";
}

/**
 * What to do after an incomplete cleanup: records not yet gone may go with
 * time, but a marker still retrievable means the application still serves
 * the run's text, which another cleanup cannot change until it is fixed.
 */
function incompleteAdvice(record: CleanupRecord): string {
  const served = stillServedAdvice(record.run_id, laterCleanupOf(record));
  if (served !== null) return capitalized(served);
  return `Some records may remain or still be served: check the namespaces with the application's own tools, or run trace external-cleanup ${record.run_id} again later`;
}

/**
 * The deletions counted as the run's own cleanup counts them: requests
 * (one per namespace, and one more each time its records came back), then
 * the ids they named.
 */
function deletionWords(
  outcome: Exclude<CleanupOutcome, { status: "not_needed" }>,
): string {
  if (outcome.delete_requests === 0) {
    return "delete requests: none (no id issued)";
  }
  const requests = outcome.record.outcome.deletes.map((d) =>
    `${d.namespace} ${d.ids} id(s)${
      // Why is one of the problems listed below, in words.
      d.acknowledged ? "" : " NOT acknowledged"}`
  );
  return `delete requests: ${outcome.delete_requests_acknowledged}/${outcome.delete_requests} acknowledged (${
    requests.join(", ")
  }), ${outcome.deleted_ids}/${outcome.ids_to_delete} id(s) deleted`;
}

/** The headline word of each outcome that did something. */
const STATUS_WORDS: Record<
  Exclude<CleanupOutcome["status"], "not_needed">,
  string
> = {
  complete:
    "complete (every store of both namespaces read 0 and neither marker was retrievable)",
  inventories_clear:
    "inventories clear (every store of both namespaces read 0; retrieval not checked)",
  incomplete: "INCOMPLETE",
};

/** What the last poll's marker queries found. */
function markersAtLastPoll(seen: CleanupPoll["marker_seen"]): string {
  const words = (["test", "control"] as const).map((role) =>
    `${role} ${
      seen[role] === null
        ? "unknown (query failed)"
        : seen[role]
        ? "STILL RETRIEVABLE"
        : "gone"
    }`
  );
  return `at the last poll ${words.join(", ")}`;
}

/**
 * `/regressions` and `/regressions.json`: the gate over enforced
 * regressions, then every saved regression, enforced and pending, each
 * with the run it was saved from, its latest replay and a Replay button.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { ReplayRecurrence } from "../../lib/ledger/recurrence.ts";
import type { GateResult } from "../../lib/ledger/regressions.ts";
import { hasLedger } from "../../lib/ledger/schema.ts";
import { type ListedRegression, regressionsView } from "../../lib/runs/mod.ts";
import { runActionOf } from "./_run_action.ts";
import {
  type RunAction,
  showsRunControls,
} from "../ui/components/action_form.tsx";
import { RawJson } from "../ui/components/raw_json.tsx";
import { PageHead, Section } from "../ui/components/section.tsx";
import { gateDisplay } from "../ui/gate_words.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import { recurrenceFrom, RegressionTable } from "../ui/regression_list.tsx";
import type { RunSource } from "../ui/run_view.ts";
import { withDataFlags } from "../ui/printed_command.ts";

/** The data of `/regressions`. */
export interface RegressionsPageData {
  schema: "trace.ui.regressions/1";
  /** `null` in a database without a ledger. */
  gate: GateResult | null;
  enforced: ListedRegression[];
  pending: ListedRegression[];
  /**
   * By regression id, what its latest recorded replay showed of the saved
   * failure, for each whose latest recorded replay did not pass.
   */
  latest_recurrence: Record<string, ReplayRecurrence>;
  /** Whether this request may start replays here, and why not. */
  run_action: RunAction;
}

/** The regressions page over `source`. */
export function regressionsPage(
  source: RunSource,
): PageSpec<RegressionsPageData> {
  return {
    path: "/regressions",
    query: [],
    title: "Regressions",
    load: async (c) => {
      // The listing and its gate as pageGate judges: with the checkpoints, refusing nothing.
      const view = await hasLedger(source.db)
        ? await regressionsView(source.db, {
          dataDir: source.dataDir ?? undefined,
        })
        : null;
      const all = view?.regressions ?? [];
      return {
        schema: "trace.ui.regressions/1",
        gate: view?.gate ?? null,
        enforced: all.filter((r) => r.status === "enforced"),
        pending: all.filter((r) => r.status === "pending"),
        latest_recurrence: view?.latest_recurrence ?? {},
        run_action: runActionOf(c, source.jobs !== null),
      };
    },
    render: (data, view) => <RegressionsBody data={data} view={view} />,
  };
}

const RegressionsBody: FC<{ data: RegressionsPageData; view: PageView }> = (
  { data, view },
) => {
  const gate = gateDisplay(data.gate);
  const replay = showsRunControls(data.run_action)
    ? { csrf: view.csrf ?? null, run: data.run_action }
    : undefined;
  const recurrence = recurrenceFrom(data.latest_recurrence);
  return (
    <>
      <PageHead
        eyebrow="Regressions"
        title="Gate"
        status={gate.status}
        reason={gate.sentence}
        meta="A replay runs fresh synthetic data under the regression's pinned contract; a passing replay says nothing about records an earlier run left behind."
      />
      <Section
        id="enforced"
        title="Enforced"
        intro="Fixed once (a replay passed): from then on a failing replay is a real regression and fails the gate."
      >
        <RegressionTable
          id="enforced-table"
          caption="Enforced regressions"
          regressions={data.enforced}
          now={view.now}
          replay={replay}
          recurrence={recurrence}
          empty={{
            title: "No enforced regressions",
            text:
              "A pending regression becomes enforced when one of its replays passes.",
          }}
        />
      </Section>
      <Section
        id="pending"
        title="Pending"
        intro="Saved from a FAIL and not passed yet: known open bugs, which do not block the gate."
      >
        <RegressionTable
          id="pending-table"
          caption="Pending regressions"
          regressions={data.pending}
          now={view.now}
          replay={replay}
          recurrence={recurrence}
          empty={{
            title: "No pending regressions",
            text:
              "Save a completed FAIL as a regression to replay it after a fix.",
            command: withDataFlags(
              "trace external-save RUN_ID",
              view.dataFlags,
            ),
          }}
        />
      </Section>
      <RawJson value={data} href={view.jsonHref} />
    </>
  );
};

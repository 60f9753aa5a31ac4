/**
 * `/targets` and `/targets/:id` (with their twins): the registered staging
 * targets with their latest verdict and a sparkline of their verdict
 * history, and one target's config (the name of its token's environment
 * variable, never a token), runs and regressions, with the button that
 * runs the deletion contract on it.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { StagingConfig } from "../../lib/contract/config.ts";
import type { ReplayRecurrence } from "../../lib/ledger/recurrence.ts";
import type { RegressionView } from "../../lib/ledger/regressions.ts";
import { latestRunPerTarget, listRuns } from "../../lib/ledger/runs.ts";
import { hasLedger } from "../../lib/ledger/schema.ts";
import type { TargetRecord } from "../../lib/ledger/targets.ts";
import { validateTargetId } from "../../lib/ledger/targets.ts";
import { NotFoundError } from "../../lib/errors.ts";
import type { RunReport } from "../../lib/runner/report.ts";
import {
  type ListedRegression,
  readRunCatalog,
  registeredTargets,
  regressionsOf,
  retiredTargetIds,
  type RunSummary,
  targetRegressionsView,
} from "../../lib/runs/mod.ts";
import { runActionOf } from "./_run_action.ts";
import {
  ActionForm,
  type RunAction,
  showsRunControls,
} from "../ui/components/action_form.tsx";
import { StatusBadge } from "../ui/components/badge.tsx";
import { type Column, DataTable } from "../ui/components/data_table.tsx";
import { EmptyState } from "../ui/components/empty_state.tsx";
import { KeyValue } from "../ui/components/key_value.tsx";
import { RawJson } from "../ui/components/raw_json.tsx";
import { PageHead, Section } from "../ui/components/section.tsx";
import {
  type VerdictPoint,
  VerdictSparkline,
} from "../ui/components/sparkline.tsx";
import { Time } from "../ui/components/time.tsx";
import { runHref, runsHref, targetHref, targetRunAction } from "../ui/links.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import { recurrenceFrom, RegressionTable } from "../ui/regression_list.tsx";
import type { RunSource } from "../ui/run_view.ts";
import { RunTable, withJobStates } from "../ui/run_list.tsx";
import { reportHeadline } from "../ui/run_words.ts";
import { withDataFlags } from "../ui/printed_command.ts";

/** Runs drawn in a target's sparkline. */
export const HISTORY_RUNS = 20;

/** One target of the list. */
export interface TargetSummary {
  target_id: string;
  /**
   * `registered` (external-register), `config` (registered by a run with
   * --config), `unregistered`: known only from runs (e.g. quickstart's),
   * so it has no stored config and cannot be run from here.
   */
  source: TargetRecord["source"] | "unregistered";
  base_url: string;
  /** `null` for an unregistered target. */
  registered_at: string | null;
  /** Its newest completed run. */
  latest: VerdictPoint | null;
  /** Its newest completed runs, oldest first (at most {@link HISTORY_RUNS}). */
  history: VerdictPoint[];
  regressions: { pending: number; enforced: number };
}

/** The data of `/targets`. */
export interface TargetsPageData {
  schema: "trace.ui.targets/1";
  targets: TargetSummary[];
  /** The run this server is running now, if any. */
  running_run_id: string | null;
}

/** The data of `/targets/:id`. */
export interface TargetPageData {
  schema: "trace.ui.target/1";
  target: TargetSummary & {
    /** `null` for an unregistered target. */
    config: StagingConfig | null;
    config_digest: string | null;
  };
  /** The verdict of its newest run and why, in one sentence. */
  headline: string;
  runs: RunSummary[];
  regressions: ListedRegression[];
  /**
   * By regression id, what its latest recorded replay showed of the saved
   * failure, for each whose latest recorded replay did not pass.
   */
  latest_recurrence: Record<string, ReplayRecurrence>;
  running_run_id: string | null;
  /** Whether this request may run the contract on this target here, and why not. */
  run_action: RunAction;
}

function point(report: RunReport): VerdictPoint {
  return {
    run_id: report.run_id,
    verdict: report.verdict,
    started_at: report.started_at,
  };
}

/** What a summary starts from: a registered target, or one known from its runs. */
interface KnownTarget {
  target_id: string;
  source: TargetSummary["source"];
  base_url: string;
  registered_at: string | null;
}

function known(record: TargetRecord): KnownTarget {
  return {
    target_id: record.target_id,
    source: record.source,
    base_url: record.base_url,
    registered_at: record.created_at,
  };
}

/** Targets that have external runs but no registration (runs of a bare config). */
async function unregistered(
  source: RunSource,
  records: readonly TargetRecord[],
): Promise<KnownTarget[]> {
  if (!await hasLedger(source.db)) return [];
  const ids = new Set(records.map((r) => r.target_id));
  return (await latestRunPerTarget(source.db, "external"))
    .filter((run) => !ids.has(run.report.target.id))
    .map((run) => ({
      target_id: run.report.target.id,
      source: "unregistered" as const,
      base_url: run.report.target.base_url,
      registered_at: null,
    }));
}

/** A target's newest completed reports, newest first: what its summary draws. */
async function recentReports(
  source: RunSource,
  targetId: string,
): Promise<RunReport[]> {
  const stored = await listRuns(source.db, "external", {
    targetId,
    limit: HISTORY_RUNS,
  });
  return stored.map((run) => run.report);
}

function summarize(
  target: KnownTarget,
  reports: readonly RunReport[],
  regressions: readonly RegressionView[],
): TargetSummary {
  const own = regressions.filter((r) => r.target_id === target.target_id);
  return {
    ...target,
    latest: reports[0] ? point(reports[0]) : null,
    history: reports.map(point).reverse(),
    regressions: {
      pending: own.filter((r) => r.status === "pending").length,
      enforced: own.filter((r) => r.status === "enforced").length,
    },
  };
}

/** The targets list over `source`. */
export function targetsPage(source: RunSource): PageSpec<TargetsPageData> {
  return {
    path: "/targets",
    // `q` is the rows filter's text, which the page's script keeps in the
    // URL and applies in the browser; the twin lists every target.
    query: ["q"],
    title: "Targets",
    load: async () => {
      const records = await registeredTargets(source.db);
      const regressions = records.length > 0
        ? await regressionsOf(source.db)
        : [];
      // Retired targets are hidden, as `external-targets` hides them; their
      // own pages stay reachable from their runs.
      const retired = await retiredTargetIds(source.db);
      const all = [
        ...records.filter((r) => !retired.has(r.target_id)).map(known),
        ...await unregistered(source, records),
      ];
      const targets = await Promise.all(
        all.map(async (record) =>
          summarize(
            record,
            await recentReports(source, record.target_id),
            regressions,
          )
        ),
      );
      return {
        schema: "trace.ui.targets/1",
        targets,
        running_run_id: source.jobs?.active ?? null,
      };
    },
    render: (data, view) => <TargetsBody data={data} view={view} />,
  };
}

/** One target's page over `source`. */
export function targetPage(source: RunSource): PageSpec<TargetPageData> {
  return {
    path: "/targets/:id",
    query: [],
    title: (data) => `${data.target.target_id} · target`,
    load: async (c, params) => {
      const id = validateTargetId(params.id!);
      const records = await registeredTargets(source.db);
      const record = records.find((t) => t.target_id === id);
      const target = record
        ? known(record)
        : (await unregistered(source, records)).find((t) => t.target_id === id);
      if (!target) {
        throw new NotFoundError(
          `Cannot find target "${id}"; register it with trace external-register --target ${id} --config FILE`,
        );
      }
      // The target's recent reports are read once, for its run list; its
      // summary draws them, and a replay among them is not read again for
      // its regression. The registered targets are not read again either.
      const catalog = await readRunCatalog(source.db, {
        dataDir: source.dataDir ?? undefined,
        kind: "external",
        targetId: id,
        limit: HISTORY_RUNS,
        registered: records,
      });
      const reports = catalog.reports;
      const { regressions, latest_recurrence } = record
        ? await targetRegressionsView(source.db, record, {
          dataDir: source.dataDir ?? undefined,
          knownReports: reports,
        })
        : { regressions: [], latest_recurrence: {} };
      const summary = summarize(target, reports, regressions);
      const runs = await withJobStates(catalog.runs, source.jobs);
      return {
        schema: "trace.ui.target/1",
        target: {
          ...summary,
          config: record?.config ?? null,
          config_digest: record?.config_digest ?? null,
        },
        headline: reports[0]
          ? reportHeadline(reports[0])
          : "No run yet: run the deletion contract on this target to get its first verdict.",
        runs,
        regressions,
        latest_recurrence,
        running_run_id: source.jobs?.active ?? null,
        run_action: record ? runActionOf(c, source.jobs !== null) : {
          allowed: false,
          reason: "role",
          message: "Only registered targets can be run from here",
        },
      };
    },
    render: (data, view) => <TargetBody data={data} view={view} />,
  };
}

const TargetsBody: FC<{ data: TargetsPageData; view: PageView }> = (
  { data, view },
) => {
  const columns: Column<TargetSummary>[] = [
    {
      header: "Latest",
      cell: (t) => <StatusBadge status={t.latest?.verdict ?? "no runs"} />,
    },
    {
      header: "Target",
      rowHeader: true,
      cell: (t) => (
        <a class="nowrap" href={targetHref(t.target_id)}>
          <code>{t.target_id}</code>
        </a>
      ),
    },
    { header: "Base URL", cell: (t) => <code>{t.base_url}</code> },
    {
      header: `History (last ${HISTORY_RUNS})`,
      cell: (t) => <VerdictSparkline points={t.history} />,
    },
    {
      header: "Regressions",
      cell: (t) =>
        t.regressions.enforced + t.regressions.pending === 0
          ? <span class="meta">none</span>
          : `${t.regressions.enforced} enforced, ${t.regressions.pending} pending`,
    },
    {
      header: "Last run",
      cell: (t) =>
        t.latest
          ? (
            <a href={runHref(t.latest.run_id)}>
              <Time iso={t.latest.started_at} now={view.now} />
            </a>
          )
          : <span class="meta">never</span>,
    },
  ];
  return (
    <>
      <div class="page-head">
        <div class="title-row">
          <h1>Targets</h1>
        </div>
        <p class="meta">
          Staging applications the deletion contract ran against: targets
          registered under a name, and configs run as they were (their id
          derived from the config). A target is immutable: its id stays bound to
          one config, so its runs and regressions compare like with like.
        </p>
      </div>
      <DataTable
        id="targets-table"
        caption="Registered targets"
        captionHidden
        columns={columns}
        rows={data.targets}
        navigable
        stack
        // Shown for a shared link's filter too: it applies only in the browser.
        filter={data.targets.length > 8 || view.url.searchParams.has("q")}
        filterNoun="target"
        empty={{
          title: "No registered targets",
          text:
            "Register a staging adapter's config under a target id; runs with --config register theirs as cfg-….",
          command:
            "trace external-register --target my-staging --config staging.json",
        }}
      />
    </>
  );
};

const TargetBody: FC<{ data: TargetPageData; view: PageView }> = (
  { data, view },
) => {
  const t = data.target;
  const config = t.config;
  const canRun = showsRunControls(data.run_action) && config !== null;
  return (
    <>
      <PageHead
        eyebrow={t.source === "config"
          ? "Target (registered by a run of a config file)"
          : t.source === "unregistered"
          ? "Target (not registered: known from its runs)"
          : "Target"}
        title={t.target_id}
        status={t.latest?.verdict ?? "no runs"}
        reason={data.headline}
        meta={
          <>
            <code>{t.base_url}</code>
            {" · registered "}
            <Time iso={t.registered_at} now={view.now} empty="never" />
            {t.latest
              ? (
                <>
                  {" · "}
                  <a href={runHref(t.latest.run_id)}>latest run</a>
                </>
              )
              : null}
          </>
        }
      />
      {canRun && config
        ? (
          <div class="actions">
            <ActionForm
              action={targetRunAction(t.target_id)}
              csrf={view.csrf ?? null}
              run={data.run_action}
              label="Run the deletion contract"
              primary
              title={`Writes ${config.document_count} synthetic document(s) into ${t.base_url}, deletes them and samples for ${config.deletion_window_seconds} s`}
            />
            <span class="meta">
              {data.running_run_id
                ? (
                  <>
                    Run{" "}
                    <a href={runHref(data.running_run_id)}>
                      <code>{data.running_run_id}</code>
                    </a>{" "}
                    is running: a new one is refused until it ends.
                  </>
                )
                : `Writes ${config.document_count} synthetic document${
                  config.document_count === 1 ? "" : "s"
                } into the staging app, deletes them, samples for ${config.deletion_window_seconds} s and cleans up.`}
            </span>
          </div>
        )
        : null}
      <Section
        id="history"
        title="Verdict history"
        intro={`The last ${HISTORY_RUNS} completed runs at most, oldest on the left: a full bar is a PASS, a half bar INCONCLUSIVE, a stub a FAIL.`}
      >
        <VerdictSparkline points={t.history} bar={12} height={32} />
      </Section>
      <Section
        id="runs"
        title="Runs"
        intro={
          <a href={runsHref({ target: t.target_id })}>
            All runs of this target
          </a>
        }
      >
        <RunTable
          id="target-runs"
          caption={`Runs of ${t.target_id}`}
          runs={data.runs}
          now={view.now}
          target={false}
          empty={{
            title: "No runs of this target yet",
            text:
              "Run the deletion contract on it, here or from the command line.",
            command: withDataFlags(
              `trace external-run --target ${t.target_id}`,
              view.dataFlags,
            ),
          }}
        />
      </Section>
      <Section id="regressions" title="Regressions">
        <RegressionTable
          id="target-regressions"
          caption={`Regressions of ${t.target_id}`}
          regressions={data.regressions}
          now={view.now}
          target={false}
          recurrence={recurrenceFrom(data.latest_recurrence)}
          replay={canRun
            ? { csrf: view.csrf ?? null, run: data.run_action }
            : undefined}
          empty={noRegressions(t.source, view.dataFlags)}
        />
      </Section>
      <Section id="config" title="Config">
        {t.config && t.config_digest
          ? <ConfigFacts config={t.config} digest={t.config_digest} />
          : (
            <EmptyState
              title="No stored config"
              command={withDataFlags(
                "trace external-register --target NAME --config staging.json",
                view.dataFlags,
              )}
            >
              These runs came from a config that was never registered, so the
              ledger keeps its digest only. Register the config under a target
              id to run it from this page and to save its failures as
              regressions.
            </EmptyState>
          )}
      </Section>
      <RawJson value={data} href={view.jsonHref} />
    </>
  );
};

/**
 * The empty Regressions table's advice: save a FAIL of a registered target;
 * a target never registered (quickstart's cfg-…) cannot be saved or
 * replayed, so it says to register the config and run it under that id
 * first, as `trace external-save` does when it refuses.
 */
function noRegressions(
  source: TargetSummary["source"],
  dataFlags: string,
): { title: string; text: string; command: string } {
  if (source === "unregistered") {
    return {
      title: "No saved regressions",
      text:
        "This target was never registered (its runs came from a config file, as trace quickstart runs its demo), so its failures cannot be saved: only a registered target can replay them. Register the config under a target id, run the contract on that target, and save its FAIL.",
      command: withDataFlags(
        [
          "trace external-register --target NAME --config staging.json",
          "trace external-run --target NAME",
          "trace external-save RUN_ID",
        ].join("\n"),
        dataFlags,
      ),
    };
  }
  return {
    title: "No saved regressions",
    text:
      "Save a failing run of this target as a regression; replays then check it under the same contract.",
    command: withDataFlags("trace external-save RUN_ID", dataFlags),
  };
}

const ConfigFacts: FC<{ config: StagingConfig; digest: string }> = (
  { config, digest },
) => (
  <KeyValue
    items={[
      { term: "base_url", value: <code>{config.base_url}</code> },
      { term: "environment", value: <code>{config.environment}</code> },
      {
        term: "token_env",
        value: config.token_env
          ? <code>{config.token_env}</code>
          : <span class="meta">none (no bearer token)</span>,
        hint: config.token_env
          ? "The name of the environment variable holding the bearer token; the token itself is never stored or shown."
          : undefined,
      },
      { term: "document_count", value: String(config.document_count) },
      {
        term: "deletion_window_seconds",
        value: String(config.deletion_window_seconds),
      },
      {
        term: "sample_interval_seconds",
        value: String(config.sample_interval_seconds),
      },
      {
        term: "timeout_seconds",
        value: Object.entries(config.timeout_seconds)
          .map(([op, s]) => `${op} ${s}`).join(", "),
      },
      { term: "Config digest", value: <code>{digest}</code> },
    ]}
  />
);

/**
 * `/` and `/index.json`: the start page. What is running, the gate over enforced regressions, the targets'
 * latest verdicts, the reference suite and the index's health, one line
 * each and each linking onward, then the most recent runs.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { GateResult } from "../../lib/ledger/regressions.ts";
import { latestRunPerTarget } from "../../lib/ledger/runs.ts";
import { hasLedger } from "../../lib/ledger/schema.ts";
import {
  referenceDashboard,
  retiredTargetIds,
  runCatalog,
  type RunSummary,
} from "../../lib/runs/mod.ts";
import type { Verdict } from "../../lib/runner/report.ts";
import { capabilityOf } from "../access.ts";
import { StatusBadge } from "../ui/components/badge.tsx";
import { Section } from "../ui/components/section.tsx";
import { Time } from "../ui/components/time.tsx";
import { gateDisplay, pageGate } from "../ui/gate_words.ts";
import type { LastHealth } from "../ui/last_health.ts";
import { runHref, targetHref } from "../ui/links.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import type { RunSource } from "../ui/run_view.ts";
import { RunTable, withJobStates } from "../ui/run_list.tsx";
import { plural } from "../ui/trace_words.ts";
import { healthLead } from "./traces_health.tsx";
import { withDataFlags } from "../ui/printed_command.ts";

/** Runs listed on the overview. */
export const RECENT_RUNS = 10;

/** One target's newest run. */
export interface TargetLatest {
  target_id: string;
  run_id: string;
  verdict: Verdict;
  started_at: string;
}

/** The data of the overview and its twin. */
export interface OverviewData {
  schema: "trace.ui.overview/1";
  /**
   * Whether this account may read runs (and whole-index health): an account
   * bound to one tenant reaches the trace pages only, so its overview holds
   * no runs, gate, targets or health.
   */
  runs_visible: boolean;
  /** Runs running now (in this process or another on this host). */
  running: RunSummary[];
  /** The newest runs, external and reference. */
  recent: RunSummary[];
  /** The gate over enforced regressions; `null` without a ledger. */
  gate: GateResult | null;
  /** The newest external run of each target that has one. */
  targets: TargetLatest[];
  /** The reference suite's latest matrix, counted. */
  reference: { systems: number; recorded: number; mismatches: number };
  /** This server's latest index health check; `null` before the first. */
  health: {
    status: string;
    checked_at: string;
    /** Every alert of the check, info included: as many as the health page lists. */
    alerts: number;
    /** The alerts that are warnings or critical (what the line counts). */
    warnings: number;
    events: number | null;
    /** Why the status is not OK (the most severe alert), as the health page leads with it. */
    reason: string | null;
  } | null;
}

/** Each target's latest run, leaving out retired targets as the targets page does. */
async function latestOfActiveTargets(
  source: RunSource,
): Promise<TargetLatest[]> {
  const retired = await retiredTargetIds(source.db);
  return (await latestRunPerTarget(source.db, "external"))
    .filter((run) => !retired.has(run.report.target.id))
    .map((run) => ({
      target_id: run.report.target.id,
      run_id: run.run_id,
      verdict: run.report.verdict,
      started_at: run.report.started_at,
    }));
}

/** The overview over `source`; reads the latest health from `health`. */
export function overviewPage(
  source: RunSource,
  health: LastHealth,
): PageSpec<OverviewData> {
  return {
    path: "/",
    query: [],
    title: "Overview",
    load: async (c) => {
      if (!capabilityOf(c, "runs.read").allowed) return hiddenOverview();
      const ledger = await hasLedger(source.db);
      const recent = await withJobStates(
        await runCatalog(source.db, {
          dataDir: source.dataDir ?? undefined,
          limit: RECENT_RUNS,
        }),
        source.jobs,
      );
      const dashboard = await referenceDashboard(source.db);
      const latest = health.latest;
      return {
        schema: "trace.ui.overview/1",
        runs_visible: true,
        running: recent.filter((run) => run.state === "running"),
        recent,
        gate: ledger ? await pageGate(source) : null,
        targets: ledger ? await latestOfActiveTargets(source) : [],
        reference: {
          systems: dashboard.rows.length + dashboard.missing.length,
          recorded: dashboard.rows.length,
          mismatches: dashboard.mismatches,
        },
        health: latest
          ? {
            status: latest.status,
            checked_at: latest.checked_at,
            alerts: latest.alerts.length,
            warnings: latest.alerts.filter((a) => a.severity !== "info").length,
            events: latest.counts?.events ?? null,
            reason: healthLead(latest),
          }
          : null,
      };
    },
    render: (data, view) => <OverviewBody data={data} view={view} />,
  };
}

/** The overview of an account that may not read runs. */
function hiddenOverview(): OverviewData {
  return {
    schema: "trace.ui.overview/1",
    runs_visible: false,
    running: [],
    recent: [],
    gate: null,
    targets: [],
    reference: { systems: 0, recorded: 0, mismatches: 0 },
    health: null,
  };
}

const OverviewBody: FC<{ data: OverviewData; view: PageView }> = (
  { data, view },
) =>
  data.runs_visible
    ? <FullOverview data={data} view={view} />
    : (
      <div class="narrow">
        <h1>Overview</h1>
        <p class="notice" role="note">
          This account is bound to one tenant, so it reaches the trace pages
          only: runs, targets, regressions, the reference suite and whole-index
          health need an unscoped account.
        </p>
        <p>
          <a class="button button--primary" href="/traces/find">
            Find incidents in your scope
          </a>
        </p>
      </div>
    );

const FullOverview: FC<{ data: OverviewData; view: PageView }> = (
  { data, view },
) => (
  <>
    <div class="page-head">
      <div class="title-row">
        <h1>Overview</h1>
      </div>
      <p class="meta">
        Does the application forget? The state of every check, one line each;
        follow a line for the evidence.
      </p>
    </div>
    <ul class="board" aria-label="State at a glance">
      {data.running.map((run) => (
        <BoardLine
          label="Running now"
          status="running"
          href={runHref(run.run_id)}
          link="Watch it"
        >
          Run <code>{run.run_id}</code> on <code>{run.target_id}</code>, started
          {" "}
          <Time iso={run.started_at} now={view.now} />.
        </BoardLine>
      ))}
      <GateLine gate={data.gate} />
      <TargetsLine targets={data.targets} />
      <BoardLine
        label="Reference suite"
        status={data.reference.recorded === 0
          ? "unknown"
          : data.reference.mismatches === 0
          ? "match"
          : "mismatch"}
        href="/reference"
        link="Dashboard"
      >
        {data.reference.recorded === 0
          ? (
            <>
              Not run yet: <code>trace reference run</code> runs all{" "}
              {data.reference.systems} systems in process, in seconds.
            </>
          )
          : data.reference.mismatches === 0
          ? `${
            data.reference.recorded === 1
              ? "The 1 system with a recorded run landed on its"
              : `All ${data.reference.recorded} systems with a recorded run landed on their`
          } expected verdict${
            data.reference.recorded < data.reference.systems
              ? ` (${
                data.reference.systems - data.reference.recorded
              } not run yet)`
              : ""
          }.`
          : `${data.reference.mismatches} of ${
            plural(data.reference.recorded, "system")
          } landed off their expected verdict: a checker bug to look at.`}
      </BoardLine>
      <HealthLine health={data.health} now={view.now} />
    </ul>
    <Section id="recent" title="Recent runs">
      <RunTable
        id="recent-runs"
        caption="Recent runs"
        runs={data.recent}
        now={view.now}
        empty={{
          title: "No runs yet",
          text:
            "Register a staging target and run the deletion contract against it, or run the reference suite; each run shows up here.",
          command: withDataFlags(
            "trace external-register --target my-staging --config staging.json\ntrace external-run --target my-staging\ntrace reference run",
            view.dataFlags,
          ),
        }}
      />
      {data.recent.length > 0
        ? (
          <p>
            <a href="/runs">All runs, with filters</a>
          </p>
        )
        : null}
    </Section>
  </>
);

const BoardLine: FC<{
  label: string;
  status: string;
  href: string;
  link: string;
  children?: unknown;
}> = ({ label, status, href, link, children }) => (
  <li class="board__line" data-nav-item="" tabindex={-1}>
    <span class="board__label">{label}</span>
    <StatusBadge status={status} />
    <span class="board__text">{children as never}</span>
    <a class="board__link" href={href}>{link}</a>
  </li>
);

const GateLine: FC<{ gate: GateResult | null }> = ({ gate }) => {
  const display = gateDisplay(gate);
  return (
    <BoardLine
      label="Gate"
      status={display.status}
      href="/regressions"
      link="Regressions"
    >
      {display.state === "none"
        ? (
          <>
            No saved regressions yet: save a FAIL with{" "}
            <code>trace external-save RUN_ID</code>; once a replay passes, the
            gate enforces it.
          </>
        )
        : display.sentence}
    </BoardLine>
  );
};

const TargetsLine: FC<{ targets: TargetLatest[] }> = ({ targets }) => {
  const failing = targets.filter((t) => t.verdict !== "PASS");
  return (
    <BoardLine
      label="Targets"
      status={targets.length === 0
        ? "unknown"
        : failing.some((t) => t.verdict === "FAIL")
        ? "fail"
        : failing.length > 0
        ? "inconclusive"
        : "pass"}
      href="/targets"
      link="Targets"
    >
      {targets.length === 0
        ? (
          <>
            No target has run yet: register one with{" "}
            <code>trace external-register</code>.
          </>
        )
        : failing.length === 0
        ? `The latest run of all ${targets.length} target${
          targets.length === 1 ? "" : "s"
        } passed.`
        : (
          <>
            {`${failing.length} of ${targets.length} target${
              targets.length === 1 ? "" : "s"
            } did not pass their latest run: `}
            {failing.slice(0, 3).map((t, i) => (
              <>
                {i > 0 ? ", " : ""}
                <a class="nowrap" href={targetHref(t.target_id)}>
                  <code>{t.target_id}</code>
                </a>{" "}
                ({t.verdict})
              </>
            ))}
            {failing.length > 3 ? ` and ${failing.length - 3} more` : ""}.
          </>
        )}
    </BoardLine>
  );
};

/**
 * The health line's words before "checked …": why the status is not OK,
 * as the health page leads with it (UNKNOWN beside "No alert", when only
 * notes were raised, read as a contradiction), else the alerts; then the
 * events.
 */
function healthSummary(health: NonNullable<OverviewData["health"]>): string {
  const events = health.events === null ? null : plural(health.events, "event");
  if (health.reason) return `${health.reason}. ${events ?? "Events unknown"}`;
  const info = health.alerts - health.warnings;
  const alerts = health.warnings === 0
    ? info === 0 ? "No alert" : `No warning (${plural(info, "info alert")})`
    : `${plural(health.warnings, "alert")}${
      info === 0 ? "" : ` and ${plural(info, "info alert")}`
    }`;
  return events === null ? alerts : `${alerts} over ${events}`;
}

const HealthLine: FC<{ health: OverviewData["health"]; now: number }> = (
  { health, now },
) => (
  <BoardLine
    label="Index health"
    status={health?.status ?? "unknown"}
    href="/traces/health"
    link={health ? "Health" : "Check now"}
  >
    {health
      ? (
        <>
          {healthSummary(health)}
          , checked <Time iso={health.checked_at} now={now} />.
        </>
      )
      : "Not checked since this server started (a full check reads the whole index, so it runs on the health page only)."}
  </BoardLine>
);

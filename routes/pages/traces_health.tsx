/**
 * `/traces/health` and `/traces/health.json`: the health of the
 * observability index (`obsHealth`) as this server sees it, with its own
 * process counters, plus the latency of this server's recent checks. The
 * page leads with the status and the one sentence behind it, then the
 * alerts, then the evidence.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import {
  type HealthAlert,
  type HealthMonitor,
  type ObsHealth,
} from "../../lib/obs/maint/mod.ts";
import { StatusBadge } from "../ui/components/badge.tsx";
import { BarChart, TimeChart } from "../ui/components/chart.tsx";
import { type Column, DataTable } from "../ui/components/data_table.tsx";
import { EmptyState } from "../ui/components/empty_state.tsx";
import { KeyValue } from "../ui/components/key_value.tsx";
import { Count } from "../ui/components/numbers.tsx";
import { RawJson } from "../ui/components/raw_json.tsx";
import { PageHead, Section } from "../ui/components/section.tsx";
import { ShownCode } from "../ui/components/shown_text.tsx";
import { Time } from "../ui/components/time.tsx";
import { formatCount } from "../ui/format.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import { FIND_PATH, hrefOf } from "../ui/trace_params.ts";
import { withDataFlags } from "../ui/printed_command.ts";
import { shellWord } from "../../lib/shell_word.ts";

/** One health check of this server, for the latency history. */
export interface LatencyPoint {
  checked_at: string;
  p50_ms: number;
  p95_ms: number;
}

/** The data of the health page and its JSON twin: `obsHealth` plus this server's recent checks. */
export type HealthPageData = ObsHealth & {
  /** Overall probe latency of this server's recent checks, oldest first (at most 60). */
  latency_history: LatencyPoint[];
};

const HISTORY_LIMIT = 60;

/**
 * The health page over the server's health monitor (one computation shared
 * by concurrent visitors, with the expensive link checks kept for a stated
 * age on large indexes); keeps its latency history in memory.
 */
export function healthPage(monitor: HealthMonitor): PageSpec<HealthPageData> {
  const history: LatencyPoint[] = [];
  return {
    path: "/traces/health",
    query: [],
    title: "Index health",
    async load() {
      // The server writes the index, so its counters are the ones to show.
      const health = await monitor.report();
      if (health.latency) {
        history.push({
          checked_at: health.checked_at,
          p50_ms: health.latency.p50_ms,
          p95_ms: health.latency.p95_ms,
        });
        if (history.length > HISTORY_LIMIT) history.shift();
      }
      return { ...health, latency_history: [...history] };
    },
    render: (data, view) => <HealthBody data={data} view={view} />,
  };
}

const SEVERITY_ORDER = { critical: 0, warning: 1, info: 2 } as const;

/** Alerts, most severe first (ties by code, as health sorts them). */
function bySeverity(alerts: readonly HealthAlert[]): HealthAlert[] {
  return [...alerts].sort((a, b) =>
    SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
    a.code.localeCompare(b.code)
  );
}

/** The most severe alert's message while the status is not OK, else `null`. */
export function healthLead(health: ObsHealth): string | null {
  if (health.status === "ok") return null;
  return bySeverity(health.alerts)[0]?.message ?? null;
}

/** The one sentence under the status. */
export function healthReason(health: ObsHealth): string {
  const alerts = bySeverity(health.alerts);
  const first = alerts[0];
  if (health.status !== "ok" && first) {
    const more = alerts.filter((a) => a.severity !== "info").length - 1;
    return `${first.message}.${
      more > 0 ? ` ${more} more ${more === 1 ? "alert" : "alerts"} below.` : ""
    }`;
  }
  const notes = alerts.length;
  const noteText = notes > 0
    ? ` ${notes} ${notes === 1 ? "note" : "notes"} below.`
    : "";
  if ((health.counts?.events ?? 0) === 0) {
    return `Nothing needs action: the index is ready and holds no events.${noteText}`;
  }
  return `Nothing needs action: the schema is current, every index is in place and every envelope is indexed.${noteText}`;
}

const HealthBody: FC<{ data: HealthPageData; view: PageView }> = (
  { data, view },
) => (
  <>
    <PageHead
      eyebrow="Traces"
      title="Index health"
      status={data.status}
      reason={healthReason(data)}
      meta={
        <>
          Checked <Time iso={data.checked_at} now={view.now} />.{" "}
          <a href={view.url.pathname}>Check again</a>
        </>
      }
    />
    <AlertsSection alerts={data.alerts} />
    {data.schema.provisioned
      ? <IndexSections data={data} view={view} />
      : (
        <Section id="schema" title="Schema">
          <EmptyState
            title="The observability index does not exist yet"
            command={withDataFlags("trace obs init", view.dataFlags)}
          >
            This database has no observability tables, so there is nothing to
            count or time. Create them with the command below (trace serve also
            creates them when it starts with write access).
          </EmptyState>
        </Section>
      )}
    <CountersSection data={data} view={view} />
    <RawJson value={data} href={view.jsonHref} />
  </>
);

const AlertsSection: FC<{ alerts: HealthAlert[] }> = ({ alerts }) => (
  <Section
    id="alerts"
    title="Alerts"
    intro="Alerts follow from the counts and checks below, never from timings, so the same index always gives the same alerts."
  >
    {alerts.length === 0
      ? (
        <EmptyState title="No alerts">
          Nothing in the index needs attention.
        </EmptyState>
      )
      : (
        <ul class="alerts">
          {bySeverity(alerts).map((alert) => (
            <li class="alert" data-nav-item="" tabindex={-1}>
              <StatusBadge status={alert.severity} />
              <div class="alert__head">
                <code>{alert.code}</code>
                {alert.count !== null
                  ? <span class="meta">({formatCount(alert.count)})</span>
                  : null}
              </div>
              <p class="alert__message">{alert.message}.</p>
            </li>
          ))}
        </ul>
      )}
  </Section>
);

const IndexSections: FC<{ data: HealthPageData; view: PageView }> = (
  { data, view },
) => (
  <>
    <Section id="index" title="Schema and readiness">
      <div class="grid">
        <div class="panel">
          <h3>Schema</h3>
          <SchemaFacts data={data} view={view} />
        </div>
        <div class="panel">
          <h3>Parity and retention</h3>
          <ParityFacts data={data} view={view} />
        </div>
      </div>
    </Section>
    <Section id="counts" title="Counts">
      <CountsPanel data={data} view={view} />
    </Section>
    <LatencySection data={data} />
    <InstrumentationSection data={data} />
    {data.parity_by_tenant.length > 0
      ? <TenantParitySection data={data} view={view} />
      : null}
  </>
);

const SchemaFacts: FC<{ data: HealthPageData; view: PageView }> = (
  { data },
) => {
  const { schema, indexes } = data;
  const current = (schema.version ?? 0) >= schema.expected;
  return (
    <KeyValue
      items={[
        {
          term: "Schema version",
          value: (
            <>
              {schema.version ?? "none"}{" "}
              <StatusBadge status={current ? "ok" : "failing"} />
            </>
          ),
          hint: `This build expects version ${schema.expected}.`,
        },
        {
          term: "Envelope version",
          value: String(schema.envelope_version),
          hint: "The format of stored source envelopes.",
        },
        {
          term: "Index readiness",
          value: (
            <>
              <StatusBadge status={indexes.ready ? "ready" : "missing"} />{" "}
              {indexes.ready
                ? `all ${indexes.expected} indexes and triggers present`
                : `${indexes.missing.length} of ${indexes.expected} missing`}
            </>
          ),
          hint: indexes.ready ? undefined : (
            <>
              Missing: <code>{indexes.missing.join(", ")}</code>
            </>
          ),
        },
      ]}
    />
  );
};

const ParityFacts: FC<{ data: HealthPageData; view: PageView }> = (
  { data, view },
) => {
  const parity = data.parity;
  const checked = "checked_at" in parity ? parity : null;
  return (
    <KeyValue
      items={[
        {
          term: "Whole-index parity",
          value: <StatusBadge status={parity.status} />,
          hint: checked
            ? (
              <>
                {formatCount(checked.envelopes)} envelopes compared,{" "}
                {formatCount(checked.mismatched)} mismatched,{" "}
                <Time iso={checked.checked_at} now={view.now} />.
              </>
            )
            : (
              <>
                No check over every tenant has run yet:{" "}
                <code>trace obs parity</code>
              </>
            ),
        },
        {
          term: "Metadata kept since",
          value: (
            <Time
              iso={data.retention.metadata_before}
              now={view.now}
              empty="everything kept (retention has not run)"
            />
          ),
        },
        {
          term: "Outcomes kept since",
          value: (
            <Time
              iso={data.retention.outcomes_before}
              now={view.now}
              empty="everything kept (retention has not run)"
            />
          ),
        },
      ]}
    />
  );
};

interface CountRow {
  name: Child;
  n: number;
  hint: string;
}

const COUNT_COLUMNS: Column<CountRow>[] = [
  { header: "What", rowHeader: true, cell: (row) => row.name },
  { header: "Rows", numeric: true, cell: (row) => formatCount(row.n) },
  { header: "Meaning", cell: (row) => row.hint },
];

const LINK_COLUMNS: Column<CountRow>[] = [
  { header: "Check", rowHeader: true, cell: (row) => row.name },
  { header: "Count", numeric: true, cell: (row) => formatCount(row.n) },
  { header: "Meaning", cell: (row) => row.hint },
];

const CountsPanel: FC<{ data: HealthPageData; view: PageView }> = (
  { data, view },
) => {
  const counts = data.counts!;
  const links = data.links!;
  const truncation = data.truncation!;
  // An index that held events, all expired or erased since, shows its counts.
  const heldEvents = counts.envelopes > 0 || counts.expiry_grants > 0 ||
    counts.erased_events > 0;
  if (counts.events === 0 && !heldEvents) {
    return (
      <EmptyState
        title="No events indexed yet"
        command={withDataFlags(
          `trace events ingest events.ndjson\ntrace demo --trace-to ${
            shellWord(view.serverOrigin)
          }`,
          view.dataFlags,
        )}
      >
        Events arrive through POST /api/events (JSON or NDJSON), POST /v1/traces
        (OTLP/HTTP from an OpenTelemetry exporter), the recorder in mod.ts, or
        the commands below; every deletion run also records its own events.
      </EmptyState>
    );
  }
  const rows: CountRow[] = [
    {
      name: <a href={FIND_PATH}>Events</a>,
      n: counts.events,
      hint: "Indexed trace events",
    },
    ...Object.entries(counts.by_store).map(([store, n]) => ({
      name: (
        <span class="indent">
          in store {n > 0
            ? (
              <a href={findHref({ store })}>
                <code>{store}</code>
              </a>
            )
            : <code>{store}</code>}
        </span>
      ),
      n,
      hint: `Events of the ${store} store`,
    })),
    {
      name: "Envelopes",
      n: counts.envelopes,
      hint: "Immutable source records the index is built from",
    },
    {
      name: "Resources",
      n: counts.resources,
      hint: "Resource references (documents, memories) of events",
    },
    {
      name: "Previews",
      n: counts.previews,
      hint: "Content previews, kept apart from metadata",
    },
    {
      name: "Coverage profiles",
      n: counts.coverage_profiles,
      hint: "Registered instrumentation coverage profiles",
    },
    {
      name: "Expiry grants",
      n: counts.expiry_grants,
      hint:
        "Envelopes a reviewed source expiry removed whose index rows remain (the archive holding each is recorded from schema version 7 on)",
    },
    {
      name: "Erased event ids",
      n: counts.erased_events,
      hint:
        "Events an erasure removed, kept as keyed digests: a resend of one stores nothing",
    },
  ];
  const checks: CountRow[] = [
    {
      name: "Missing parent links",
      n: links.missing_parent_links,
      hint:
        "Events naming a parent the index does not hold; an inspection marks each (parent … not read)",
    },
    {
      name: "Unindexed envelopes",
      n: links.unindexed_envelopes,
      hint: "Envelopes without index rows (retention-removed rows excluded)",
    },
    {
      name: "Unregistered coverage profiles",
      n: links.unregistered_coverage_profiles,
      hint:
        "Profiles events name but nobody registered; an inspection's contract panel names the profile",
    },
    {
      name: "Truncated previews",
      n: truncation.truncated_previews,
      hint: `Of ${
        formatCount(truncation.previews)
      } previews, stored cut at 16,000 characters`,
    },
  ];
  return (
    <div class="grid">
      <DataTable
        caption="Rows in the index"
        columns={COUNT_COLUMNS}
        rows={rows}
      />
      <DataTable
        caption="Links and truncation"
        columns={LINK_COLUMNS}
        rows={checks}
      />
    </div>
  );
};

const LatencySection: FC<{ data: HealthPageData }> = ({ data }) => {
  const latency = data.latency;
  if (!latency) return null;
  const history = data.latency_history;
  return (
    <Section
      id="latency"
      title="Query latency"
      intro={`Each probe query ran ${
        latency.probes[0]?.samples ?? 0
      } times on this machine just now: p50 ${latency.p50_ms} ms, p95 ${latency.p95_ms} ms over all ${latency.samples} samples. Timings are shown, never alerted on.`}
    >
      <div class="grid">
        <div class="panel">
          <BarChart
            id="latency-probes"
            title="Probe latency"
            unit="ms"
            categories={latency.probes.map((p) => p.name)}
            series={[
              { label: "p50", values: latency.probes.map((p) => p.p50_ms) },
              { label: "p95", values: latency.probes.map((p) => p.p95_ms) },
            ]}
          />
        </div>
        <div class="panel">
          {history.length >= 2
            ? (
              <TimeChart
                id="latency-history"
                title="This server's recent checks"
                unit="ms"
                series={[
                  {
                    label: "p50",
                    points: history.map((p) => ({
                      t: Date.parse(p.checked_at),
                      v: p.p50_ms,
                    })),
                  },
                  {
                    label: "p95",
                    points: history.map((p) => ({
                      t: Date.parse(p.checked_at),
                      v: p.p95_ms,
                    })),
                  },
                ]}
                table="sr-only"
              />
            )
            : (
              <EmptyState title="One check so far">
                This server keeps the latency of its last 60 health checks in
                memory; check again to draw how it changes over time.
              </EmptyState>
            )}
        </div>
      </div>
    </Section>
  );
};

type VersionRow = ObsHealth["instrumentation"]["versions"][number];

const VERSION_COLUMNS: Column<VersionRow>[] = [
  {
    header: "instrumentation.name",
    rowHeader: true,
    cell: (row) =>
      row.name === null
        ? <span class="meta">not set</span>
        : <ShownCode text={row.name} />,
  },
  {
    header: "instrumentation.version",
    cell: (row) =>
      row.version === null
        ? <span class="meta">not set</span>
        : <ShownCode text={row.version} />,
  },
  { header: "Events", numeric: true, cell: (row) => formatCount(row.events) },
];

const InstrumentationSection: FC<{ data: HealthPageData }> = ({ data }) => (
  <Section
    id="instrumentation"
    title="Instrumentation versions"
    intro={`Read from the attributes of the latest ${
      data.instrumentation.sampled_events === 1
        ? "event"
        : `${formatCount(data.instrumentation.sampled_events)} events`
    }.`}
  >
    <DataTable
      id="instrumentation-table"
      caption="Instrumentation versions of recent events"
      captionHidden
      narrow
      columns={VERSION_COLUMNS}
      rows={data.instrumentation.versions}
      empty={{
        title: "No events to sample",
        text:
          "Versions are read from the instrumentation.name and instrumentation.version attributes of ingested events.",
      }}
    />
  </Section>
);

const TenantParitySection: FC<{ data: HealthPageData; view: PageView }> = (
  { data, view },
) => (
  <Section
    id="tenant-parity"
    title="Parity checks of single applications"
    intro="Shown for reference; only a check over every tenant sets the parity status."
  >
    <DataTable
      caption="Last parity check per application"
      captionHidden
      columns={[
        {
          header: "Application",
          rowHeader: true,
          cell: (row) => <ShownCode text={row.application_id ?? ""} />,
        },
        {
          header: "Status",
          cell: (row) => <StatusBadge status={row.status} />,
        },
        {
          header: "Envelopes",
          numeric: true,
          cell: (row) => formatCount(row.envelopes),
        },
        {
          header: "Mismatched",
          numeric: true,
          cell: (row) => formatCount(row.mismatched),
        },
        {
          header: "Checked",
          cell: (row) => <Time iso={row.checked_at} now={view.now} />,
        },
      ]}
      rows={data.parity_by_tenant}
    />
  </Section>
);

const CountersSection: FC<{ data: HealthPageData; view: PageView }> = (
  { data, view },
) => {
  const counters = data.counters;
  const rows = Object.entries(counters.values).map(([name, value]) => ({
    name,
    value,
  }));
  return (
    <Section
      id="counters"
      title="Process counters"
      intro={counters.state === "recorded"
        ? (
          <>
            Counted by this server process since{" "}
            <Time iso={counters.since} now={view.now} />. Events written by
            other processes (trace events ingest, a recorder in your
            application) are counted there and are unknown here.
          </>
        )
        : "This reader is not the writing process, so its counters are unknown (never zero)."}
    >
      <DataTable
        caption="Process counters"
        captionHidden
        narrow
        columns={[
          {
            header: "Counter",
            rowHeader: true,
            cell: (row) => (
              <>
                <code>{row.name}</code>
                <CounterEvents name={row.name} value={row.value} />
              </>
            ),
          },
          {
            header: "Value",
            numeric: true,
            cell: (row) => <Count n={row.value} />,
          },
        ]}
        rows={rows}
      />
    </Section>
  );
};

/** The finder, narrowed by `filters`. */
function findHref(filters: Record<string, string>): string {
  return hrefOf(FIND_PATH, new URLSearchParams(filters));
}

/**
 * The events behind a counter, where the index keeps them as events: a
 * missing trace context is recorded as a `trace_context_missing` event.
 */
const COUNTER_EVENTS: Readonly<Record<string, Record<string, string>>> = {
  context_missing: { kind: "trace_context_missing" },
};

const CounterEvents: FC<{ name: string; value: number | null }> = (
  { name, value },
) => {
  const filters = COUNTER_EVENTS[name];
  if (!filters || !value) return null;
  return <a class="cell-note" href={findHref(filters)}>find these events</a>;
};

/**
 * The body of `/traces/compare`: whether the roots differ and in what, then
 * each difference with both sides' numbers, then a form to pick the roots.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import { LINEAGE_LANES } from "../../lib/obs/query/mod.ts";
import { DataTable } from "../ui/components/data_table.tsx";
import { EmptyState } from "../ui/components/empty_state.tsx";
import { LANE_TITLES } from "../ui/components/lineage_panel.tsx";
import { PageHead, Section } from "../ui/components/section.tsx";
import { Shown, ShownCode } from "../ui/components/shown_text.tsx";
import { TextField } from "../ui/components/text_field.tsx";
import { formatCount, formatDuration } from "../ui/format.ts";
import type { PageView } from "../ui/page.ts";
import {
  type FormRefusal,
  invalidField,
  RefusalNotice,
  refusedInputs,
} from "../ui/form_refusal.tsx";
import {
  backToFinder,
  cleanParams,
  COMPARE_PATH,
  inspectHref,
} from "../ui/trace_params.ts";
import { evidenceSentence, plural } from "../ui/trace_words.ts";
import type {
  CompareData,
  RefusedCompare,
  SideRead,
} from "./traces_compare_data.ts";

/** The comparison page's body. */
export const CompareBody: FC<{ data: CompareData; view: PageView }> = (
  { data },
) => {
  const back = backToFinder(data.request.from, undefined);
  const c = data.comparison;
  return (
    <>
      <PageHead
        eyebrow="Traces · compare"
        title="Compare roots"
        status={c ? (c.identical ? "identical" : "different") : "unknown"}
        reason={headline(data)}
        meta={
          <>
            Nothing is executed: this compares recorded metadata only.{" "}
            <a class="nowrap" href={back}>Back to the finder</a>
          </>
        }
      />
      {data.baseline || data.candidate ? <Sides data={data} /> : null}
      {c ? <Differences data={data} /> : null}
      <PickForm
        values={pickedValues(data.request)}
        from={data.request.from ?? null}
        refusal={null}
        intro={!c}
      />
    </>
  );
};

/** The form's values for a comparison it read. */
function pickedValues(request: CompareData["request"]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [side] of COMPARED_SIDES) {
    values[side] = request[side]?.root_trace_id ?? "";
    values[`${side}_application_id`] = request[side]?.application_id ?? "";
  }
  return values;
}

function headline(data: CompareData): string {
  if (!data.provisioned) return "There is no observability index yet.";
  const c = data.comparison;
  if (!data.request.baseline || !data.request.candidate) {
    return "Name a baseline root and a candidate root to compare.";
  }
  if (data.baseline?.events === 0 && data.candidate?.events === 0) {
    return "Neither root has a stored event in your scope; check their ids and application.";
  }
  if (data.baseline?.events === 0 || data.candidate?.events === 0) {
    const which = data.baseline?.events === 0 ? "baseline" : "candidate";
    return `The ${which} root has no stored event in your scope; check its id and application.`;
  }
  if (!c) return "Nothing to compare.";
  if (c.identical) {
    return "No structural difference: the same kinds in the same order, the same refs in every lane, the same selections and findings.";
  }
  const parts = [
    c.kinds.some((k) => k.changed) ? "kinds" : null,
    c.first_divergence ? "event order" : null,
    LINEAGE_LANES.some((l) =>
        c.lanes[l].only_baseline.length + c.lanes[l].only_candidate.length > 0
      )
      ? "lineage"
      : null,
    c.selections.selected.only_baseline.length +
          c.selections.selected.only_candidate.length > 0
      ? "selected refs"
      : null,
    c.findings.only_baseline.length + c.findings.only_candidate.length > 0
      ? "findings"
      : null,
    c.errors.baseline !== c.errors.candidate ? "errors" : null,
  ].filter(Boolean);
  return `The candidate differs from the baseline in ${
    parts.length ? parts.join(", ") : "selection reasons"
  }.`;
}

const Sides: FC<{ data: CompareData }> = ({ data }) => {
  const from = new URLSearchParams(data.request.from ?? "");
  const side = (name: string, read: SideRead | null) =>
    read
      ? {
        name,
        read,
        href: read.application_id
          ? inspectHref({
            application_id: read.application_id,
            root_trace_id: read.root_trace_id,
          }, from)
          : null,
      }
      : null;
  const rows = [
    side("Baseline", data.baseline),
    side("Candidate", data.candidate),
  ].filter((row) => row !== null);
  return (
    <Section id="sides" title="The two roots">
      <DataTable
        caption="Baseline and candidate"
        captionHidden
        columns={[
          { header: "Side", rowHeader: true, cell: (r) => r.name },
          {
            header: "Root",
            cell: (r) =>
              r.href
                ? (
                  <a href={r.href}>
                    <Shown text={r.read.root_trace_id} />
                  </a>
                )
                : <ShownCode text={r.read.root_trace_id} />,
          },
          {
            header: "Application",
            cell: (r) => <ShownCode text={r.read.application_id ?? "none"} />,
          },
          {
            header: "Events read",
            numeric: true,
            cell: (r) => formatCount(r.read.events),
          },
          {
            header: "What the read proves",
            cell: (r) =>
              r.read.events === 0
                ? "Nothing: no stored event in your scope has this root id."
                : evidenceSentence(r.read, "the first 1,000 events"),
          },
        ]}
        rows={rows}
      />
    </Section>
  );
};

const Differences: FC<{ data: CompareData }> = ({ data }) => {
  const c = data.comparison!;
  const duration = (ms: number | null) =>
    ms === null ? "–" : formatDuration(ms);
  return (
    <>
      <Section id="kinds" title="Events and kinds">
        <p class="meta">
          {plural(c.events.baseline, "event")} against{" "}
          {formatCount(c.events.candidate)}; errors{" "}
          {formatCount(c.errors.baseline)} against{" "}
          {formatCount(c.errors.candidate)}; span{" "}
          {duration(c.duration_ms.baseline)} against{" "}
          {duration(c.duration_ms.candidate)}.{" "}
          <Shown
            text={c.first_divergence
              ? `The kind sequences part at event ${
                c.first_divergence.index + 1
              }: ${c.first_divergence.baseline ?? "nothing"} in the baseline, ${
                c.first_divergence.candidate ?? "nothing"
              } in the candidate.`
              : "Both roots record the same kinds in the same order."}
          />
        </p>
        <DataTable
          id="kind-table"
          caption="Events per kind"
          captionHidden
          narrow
          columns={[
            {
              header: "Kind",
              rowHeader: true,
              cell: (k) => <ShownCode text={k.kind} />,
            },
            {
              header: "Baseline",
              numeric: true,
              cell: (k) => formatCount(k.baseline),
            },
            {
              header: "Candidate",
              numeric: true,
              cell: (k) => formatCount(k.candidate),
            },
            {
              header: "Change",
              numeric: true,
              cell: (k) =>
                k.changed ? signed(k.candidate - k.baseline) : "same",
            },
          ]}
          rows={c.kinds}
        />
      </Section>
      <Section id="lanes" title="Lineage">
        <DataTable
          caption="Refs per lane on one side only"
          captionHidden
          columns={[
            { header: "Lane", rowHeader: true, cell: (l) => LANE_TITLES[l] },
            {
              header: "Both",
              numeric: true,
              cell: (l) => formatCount(c.lanes[l].both),
            },
            {
              header: "Only in baseline",
              cell: (l) => refs(c.lanes[l].only_baseline),
            },
            {
              header: "Only in candidate",
              cell: (l) => refs(c.lanes[l].only_candidate),
            },
            {
              header: "Listed",
              cell: (l) =>
                c.lanes[l].truncated ? "the first 50 of each side" : "all",
            },
          ]}
          rows={[...LINEAGE_LANES]}
        />
      </Section>
      <Section id="selections" title="Selections">
        <p class="meta">
          {plural(c.selections.events.baseline, "selection event")} with{" "}
          {plural(c.selections.candidates.baseline, "candidate")}{" "}
          in the baseline,{" "}
          {plural(c.selections.events.candidate, "selection event")} with{" "}
          {plural(c.selections.candidates.candidate, "candidate")}{" "}
          in the candidate. Kept only in the baseline:{" "}
          {refs(c.selections.selected.only_baseline)}; kept only in the
          candidate: {refs(c.selections.selected.only_candidate)}.
        </p>
        <DataTable
          caption="Dropped candidates by reason"
          captionHidden
          narrow
          columns={[
            {
              header: "Reason",
              rowHeader: true,
              cell: (r) => <ShownCode text={r.reason} />,
            },
            {
              header: "Baseline",
              numeric: true,
              cell: (r) => formatCount(r.baseline),
            },
            {
              header: "Candidate",
              numeric: true,
              cell: (r) => formatCount(r.candidate),
            },
          ]}
          rows={c.selections.rejected_by_reason}
          empty={{
            title: "No candidate dropped on either side",
            text:
              "Neither root records a selection candidate with selected: false.",
          }}
        />
      </Section>
      <Section id="findings" title="Analysis findings">
        <p>
          Only in the baseline:{" "}
          {codes(c.findings.only_baseline)}. Only in the candidate:{" "}
          {codes(c.findings.only_candidate)}. In both: {codes(c.findings.both)}.
        </p>
      </Section>
    </>
  );
};

function signed(n: number): string {
  return n > 0 ? `+${formatCount(n)}` : formatCount(n);
}

function refs(list: readonly string[]) {
  if (list.length === 0) return <span class="meta">none</span>;
  return (
    <code class="ref">
      <Shown text={list.join(", ")} />
    </code>
  );
}

function codes(list: readonly string[]) {
  if (list.length === 0) return <span class="meta">none</span>;
  return <ShownCode text={list.join(", ")} />;
}

/** The two roots of a comparison: their parameter name and how the form titles them. */
const COMPARED_SIDES = [
  ["baseline", "Baseline"],
  ["candidate", "Candidate"],
] as const;

/** The form's fields, in its order: query parameter, input id and label. */
const PICK_FIELDS = COMPARED_SIDES.flatMap(([side, title]) =>
  [
    [side, `c-${side}`, `${title} root id`],
    [`${side}_application_id`, `c-${side}-app`, `${title} application`],
  ] as const
);

/** The id of the notice above a refused comparison. */
const COMPARE_NOTICE = "compare-error";

/** The comparison page after a refused query: the notice, and the form as it was sent. */
export const RefusedCompareBody: FC<
  { data: RefusedCompare; view: PageView }
> = ({ data, view }) => {
  const params = cleanParams(view.url.searchParams);
  // A refused `from` is not sent again: the form has no field for it.
  const from = /^Invalid trace page query: from\b/.test(data.refused.message)
    ? null
    : params.get("from");
  return (
    <>
      <div class="page-head">
        <p class="eyebrow">Traces · compare</p>
        <h1>Compare roots</h1>
        <p class="lead" role="status">
          Correct the roots below to compare them.
        </p>
        <p class="meta">
          <a href={backToFinder(from ?? undefined, undefined)}>
            Back to the finder
          </a>
        </p>
      </div>
      <RefusalNotice
        id={COMPARE_NOTICE}
        refusal={data.refused}
        outcome="Nothing was compared"
        retry="compare again"
        fields={refusedInputs(data.refused, PICK_FIELDS)}
        reason={data.refused.message.replace(/^Invalid trace page query: /, "")}
      />
      <PickForm
        values={Object.fromEntries(
          PICK_FIELDS.map(([name]) => [name, params.getAll(name).join(",")]),
        )}
        from={from}
        refusal={data.refused}
        intro={false}
      />
    </>
  );
};

/** The form that picks the roots, filled with `values` by query parameter. */
const PickForm: FC<{
  values: Readonly<Record<string, string>>;
  from: string | null;
  refusal: FormRefusal | null;
  /** Say what to pick first (nothing compared yet). */
  intro: boolean;
}> = ({ values, from, refusal, intro }) => (
  <Section id="pick" title="Roots to compare">
    {intro
      ? (
        <EmptyState title="Pick two roots">
          Root ids are listed by the finder; inspection offers its root as the
          baseline.
        </EmptyState>
      )
      : null}
    <form
      class="finder-form"
      method="get"
      action={COMPARE_PATH}
      data-drop-empty=""
    >
      <div class="field-grid">
        {PICK_FIELDS.map(([name, id, label]) => (
          <TextField
            id={id}
            name={name}
            label={label}
            value={values[name] ?? ""}
            required={!name.endsWith("_application_id")}
            refusedBy={invalidField(refusal, name, COMPARE_NOTICE)[
              "aria-describedby"
            ]}
          />
        ))}
      </div>
      {from ? <input type="hidden" name="from" value={from} /> : null}
      <p>
        <button type="submit" class="button--primary">Compare</button>
      </p>
    </form>
  </Section>
);

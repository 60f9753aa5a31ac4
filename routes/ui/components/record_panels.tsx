/**
 * The artifact and contract panels of an inspection, and the analysis
 * findings. A panel with nothing recorded lists the fields that would have
 * filled it and says the host did not record them; it never fills the gap
 * with a guess. Current artifact state needs the host's artifact resolver,
 * which the page names when it is absent.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type {
  AnalysisFinding,
  ArtifactEvidence,
  ContractEvidence,
  StageCheck,
} from "../../../lib/obs/query/mod.ts";
import { StatusBadge } from "./badge.tsx";
import { EmptyState } from "./empty_state.tsx";
import { KeyValue } from "./key_value.tsx";
import type { RefLookup } from "./lineage_panel.tsx";
import { ArtifactLookup, CapabilityNote } from "./operator_controls.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import { RefLabel } from "./trace_bits.tsx";

/** A panel state as a badge word. */
function stateWord(state: ArtifactEvidence["state"]): string {
  return state === "no_recorded_evidence" ? "not recorded" : state;
}

const Missing: FC<{ fields: readonly string[]; unknown: boolean }> = (
  { fields, unknown },
) => (
  <EmptyState title={unknown ? "Unknown" : "Not recorded"}>
    {unknown
      ? "Not among the events read (the read was partial or untrusted), so whether it was recorded is unknown. "
      : "The host did not record it, and Trace does not infer it. "}
    Missing fields: {fields.join("; ")}.
  </EmptyState>
);

/** The artifacts the root's events name. */
export const ArtifactPanel: FC<{
  evidence: ArtifactEvidence;
  selectHref: (eventId: string) => string;
  /** The artifact lookup each artifact offers (or says why not). */
  lookup: RefLookup;
}> = ({ evidence, selectHref, lookup }) => (
  <div class="panel">
    <h3>
      Artifacts <StatusBadge status={stateWord(evidence.state)} />
    </h3>
    {evidence.artifacts.length === 0
      ? (
        <Missing
          fields={evidence.missing}
          unknown={evidence.state === "unknown"}
        />
      )
      : (
        <ul class="ref-list">
          {evidence.artifacts.map((a) => (
            <li>
              <RefLabel {...a} />{" "}
              <span class="meta">
                via {a.via === "outcome" ? "outcome of" : "artifact_persisted"}
                {" "}
                <a href={selectHref(a.event_id)}>
                  <Shown text={a.event_id} />
                </a>
              </span>{" "}
              <ArtifactLookup
                ref={{
                  type: a.type,
                  id: a.id,
                  ...(a.version === null ? {} : { version: a.version }),
                }}
                capability={lookup.capability}
                application_id={lookup.application_id}
              />
            </li>
          ))}
        </ul>
      )}
    {evidence.expected_artifact_types.length > 0
      ? (
        <p class="meta">
          Expected types:{" "}
          <ShownCode text={evidence.expected_artifact_types.join(", ")} />
        </p>
      )
      : null}
    {evidence.artifacts.length > 0
      ? (
        <CapabilityNote
          capability={lookup.capability}
          lead="Current artifact state is not looked up here"
        />
      )
      : null}
  </div>
);

const Stages: FC<{ stages: readonly StageCheck[] }> = ({ stages }) => (
  <>
    {stages.map((s, i) => (
      <>
        {i > 0 ? ", " : ""}
        <ShownCode text={s.stage} />{" "}
        <span class="meta">
          {s.observed === null
            ? "(not read)"
            : s.observed
            ? "(seen)"
            : "(missing)"}
        </span>
      </>
    ))}
  </>
);

/** The coverage profile, intent and outcome the root declared. */
export const ContractPanel: FC<{
  evidence: ContractEvidence;
  selectHref: (eventId: string) => string;
}> = ({ evidence, selectHref }) => {
  const items = [
    ...evidence.profiles.map((p) => ({
      term: `Profile ${p.name}`,
      value: p.registered
        ? <Stages stages={p.required} />
        : <StatusBadge status="missing" />,
      hint: p.registered
        ? (p.optional.length > 0
          ? (
            <>
              optional: <Stages stages={p.optional} />
            </>
          )
          : "required stages")
        : "declared by an event but not registered in this index",
    })),
    ...(evidence.intent
      ? [{
        term: "Intent",
        value: evidence.intent.name
          ? <ShownCode text={evidence.intent.name} />
          : <span class="meta">no intent.name</span>,
        hint: (
          <a href={selectHref(evidence.intent.event_id)}>
            <Shown text={evidence.intent.event_id} />
          </a>
        ),
      }]
      : []),
    ...(evidence.outcome
      ? [{
        term: "Outcome",
        value: (
          <>
            <StatusBadge status={evidence.outcome.status} />{" "}
            {evidence.outcome.verified
              ? "verified by the host"
              : "not verified"}
          </>
        ),
        hint: (
          <a href={selectHref(evidence.outcome.event_id)}>
            <Shown text={evidence.outcome.event_id} />
          </a>
        ),
      }]
      : []),
  ];
  return (
    <div class="panel">
      <h3>
        Contract <StatusBadge status={stateWord(evidence.state)} />
      </h3>
      {items.length > 0 ? <KeyValue items={items} /> : null}
      {evidence.missing.length > 0
        ? (
          <Missing
            fields={evidence.missing}
            unknown={evidence.state === "unknown"}
          />
        )
        : null}
    </div>
  );
};

/** The deterministic analysis, most severe first. */
export const Findings: FC<{
  findings: readonly AnalysisFinding[];
  selectHref: (eventId: string) => string;
}> = ({ findings, selectHref }) => {
  if (findings.length === 0) {
    return (
      <EmptyState title="Nothing stands out">
        The analysis found no lane disagreement, deleted ref in use, error or
        missing carrier in the events read.
      </EmptyState>
    );
  }
  const order = { problem: 0, warning: 1, info: 2 } as const;
  return (
    <ul class="alerts">
      {[...findings].sort((a, b) => order[a.severity] - order[b.severity]).map(
        (f) => (
          <li class="alert" data-nav-item="" tabindex={-1}>
            <StatusBadge status={f.severity} />
            <div class="alert__head">
              <ShownCode text={f.code} />
            </div>
            <p class="alert__message">
              <Shown text={`${f.message}.`} />
              {f.refs.length > 0
                ? (
                  <span class="meta">
                    <Shown text={` Refs: ${f.refs.join(", ")}.`} />
                  </span>
                )
                : null}
              {f.event_ids.length > 0
                ? (
                  <span class="meta">
                    {" Events: "}
                    {f.event_ids.map((id, i) => (
                      <>
                        {i > 0 ? ", " : ""}
                        <a href={selectHref(id)}>
                          <Shown text={id} />
                        </a>
                      </>
                    ))}
                  </span>
                )
                : null}
            </p>
          </li>
        ),
      )}
    </ul>
  );
};

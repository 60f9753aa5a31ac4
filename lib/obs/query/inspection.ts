/**
 * What a root's events record about its artifacts and its contract (the
 * coverage profile it declared, its intent, its outcome), for inspection.
 * Only recorded fields count: when nothing is recorded the answer names the
 * fields that would have said it, and its state is `no_recorded_evidence`
 * after a complete read or `unknown` after a partial or untrusted one. No
 * binding is inferred from content or from ref names.
 *
 * @module
 */

import type { CoverageProfile } from "../coverage.ts";
import type { Outcome, TraceEvent } from "../model.ts";
import type { ReadCompleteness } from "./query.ts";

/** Whether a panel's evidence was recorded, provably absent from the stored events, or unknown. */
export type EvidenceState = "recorded" | "no_recorded_evidence" | "unknown";

/** An artifact a root's events name. */
export interface RecordedArtifact {
  type: string;
  id: string;
  version: string | null;
  event_id: string;
  /** Where it was recorded: an outcome's artifact, or an `artifact_persisted` event's ref. */
  via: "outcome" | "artifact_persisted";
}

/** The artifact panel. */
export interface ArtifactEvidence {
  state: EvidenceState;
  artifacts: RecordedArtifact[];
  /** Types an intent said it expects (`intent.expected_artifact_types`). */
  expected_artifact_types: string[];
  /** Fields no event recorded. */
  missing: string[];
}

/** A stage of a declared profile, and whether an event showed it (`null`: not among the events read). */
export interface StageCheck {
  stage: string;
  observed: boolean | null;
}

/** The contract panel. */
export interface ContractEvidence {
  state: EvidenceState;
  profiles: {
    name: string;
    registered: boolean;
    required: StageCheck[];
    optional: StageCheck[];
  }[];
  intent:
    | {
      event_id: string;
      name: string | null;
      expected_artifact_types: string[];
    }
    | null;
  /** The last recorded outcome. */
  outcome: (Outcome & { event_id: string }) | null;
  missing: string[];
}

function stateOf(found: boolean, read: ReadCompleteness): EvidenceState {
  if (found) return "recorded";
  return read === "complete" ? "no_recorded_evidence" : "unknown";
}

function expectedTypes(event: TraceEvent): string[] {
  const value = event.attributes["intent.expected_artifact_types"];
  if (typeof value !== "string") return [];
  return value.split(",").map((t) => t.trim()).filter((t) => t !== "");
}

/** The artifacts `events` record. */
export function artifactEvidence(
  events: readonly TraceEvent[],
  read: ReadCompleteness,
): ArtifactEvidence {
  const artifacts: RecordedArtifact[] = [];
  for (const event of events) {
    const artifact = event.outcome?.artifact;
    if (artifact) {
      artifacts.push({
        type: artifact.type,
        id: artifact.id,
        version: artifact.version ?? null,
        event_id: event.event_id,
        via: "outcome",
      });
    }
    if (event.kind !== "artifact_persisted") continue;
    for (const ref of event.resources) {
      artifacts.push({
        type: ref.type,
        id: ref.id,
        version: ref.version ?? null,
        event_id: event.event_id,
        via: "artifact_persisted",
      });
    }
  }
  const expected = [...new Set(events.flatMap(expectedTypes))].sort();
  const missing: string[] = [];
  if (!events.some((e) => e.outcome?.artifact)) {
    missing.push("outcome.artifact");
  }
  if (!events.some((e) => e.kind === "artifact_persisted")) {
    missing.push("an artifact_persisted event with the artifact as a resource");
  }
  if (expected.length === 0) missing.push("intent.expected_artifact_types");
  return {
    state: stateOf(artifacts.length > 0, read),
    artifacts,
    expected_artifact_types: expected,
    missing,
  };
}

function profileOf(
  name: string,
  application: string,
  profiles: readonly CoverageProfile[],
): CoverageProfile | undefined {
  return profiles.find((p) =>
    p.name === name && p.application_id === application
  ) ??
    profiles.find((p) => p.name === name && p.application_id === null);
}

/** The contract `events` (of one application's root) record. */
export function contractEvidence(
  events: readonly TraceEvent[],
  profiles: readonly CoverageProfile[],
  read: ReadCompleteness,
): ContractEvidence {
  const stages = new Set(events.map((e) => e.stage));
  const check = (stage: string): StageCheck => ({
    stage,
    observed: stages.has(stage) ? true : read === "complete" ? false : null,
  });
  const names = [
    ...new Set(events.flatMap((e) => e.coverage_profile ?? [])),
  ].sort();
  const application = events[0]?.application_id ?? "";
  const declared = names.map((name) => {
    const profile = profileOf(name, application, profiles);
    return {
      name,
      registered: profile !== undefined,
      required: (profile?.required ?? []).map(check),
      optional: (profile?.optional ?? []).map(check),
    };
  });
  const intentEvent = events.find((e) => e.kind === "intent");
  const intentName = intentEvent?.attributes["intent.name"];
  const last = [...events].reverse().find((e) => e.outcome !== null);
  const missing: string[] = [];
  if (declared.length === 0) {
    missing.push("coverage_profile (usually on the intent event)");
  }
  if (!intentEvent) {
    missing.push("an intent event (kind intent, with intent.name)");
  }
  if (!last) missing.push("outcome (verified by the host)");
  return {
    state: stateOf(
      declared.length > 0 || intentEvent !== undefined || last !== undefined,
      read,
    ),
    profiles: declared,
    intent: intentEvent
      ? {
        event_id: intentEvent.event_id,
        name: typeof intentName === "string" ? intentName : null,
        expected_artifact_types: expectedTypes(intentEvent),
      }
      : null,
    outcome: last ? { ...last.outcome!, event_id: last.event_id } : null,
    missing,
  };
}

/**
 * What a retrieval finding adds about the marker: the forms it was seen in,
 * a spelling that was rendered rather than byte for byte, and an answer or
 * field other than the test answer's `text`. A rendered or misplaced marker
 * is retrieval evidence all the same, so the finding says where to look.
 *
 * @module
 */

import type { Series } from "./_residual_series.ts";
import {
  describeRendering,
  type MarkerForm,
  WHOLE_ANSWER,
} from "./marker/mod.ts";
import type { Finding, Sample } from "./report.ts";

/** Retrieval findings name the forms the marker was seen in. */
export function withForms(
  result: Finding,
  series: Series,
  samples: Sample[],
): Finding {
  if (series.subject !== "retrieval") return result;
  const forms = new Set(
    result.sample_indexes.map((i) => samples[i]!.marker_form),
  );
  result.marker_forms = (["exact", "rendered"] as const).filter((
    form: MarkerForm,
  ) => forms.has(form));
  return result;
}

/** ", rendered as Markdown escapes (not byte for byte)" when a retrieval finding rests on rendered answers. */
export function renderedNote(series: Series, samples: Sample[]): string {
  if (series.subject !== "retrieval") return "";
  const rendered = samples.filter((s) => s.marker_form === "rendered");
  if (rendered.length === 0) return "";
  const traits = [...new Set(rendered.flatMap((s) => s.marker_rendering))];
  const all = rendered.length === samples.length;
  return ` (${all ? "" : "in some samples "}rendered with ${
    describeRendering(traits)
  } rather than byte for byte: the answer still carries the marker)`;
}

/** Most places one retrieval finding names; a run that moves the marker around names the first few. */
const MAX_PLACES = 3;

/**
 * Where a retrieval finding's marker was, when not in the test answer's
 * `text`: another field of that answer, or the control query's answer.
 */
export function placeNote(series: Series, samples: Sample[]): string {
  if (series.subject !== "retrieval") return "";
  const places = new Set<string>();
  for (const sample of samples) {
    const place = sample.marker_found_in;
    if (!place) continue;
    const where = fieldWords(place.field);
    if (place.answer === "inventory") {
      places.add(
        `${where} of the ${place.query} namespace's /inventory answer: the adapter still lists the deleted record, whatever its counts say`,
      );
      continue;
    }
    if (place.query === "test" && place.field === "text") continue;
    places.add(
      place.query === "test"
        ? `${where} of the /query answer rather than its text`
        : `${where} of the control namespace's /query answer: the deleted canary is retrievable from outside the test namespace`,
    );
  }
  if (places.size === 0) return "";
  return ` (seen ${[...places].slice(0, MAX_PLACES).join("; and ")})`;
}

/** "in the field sources.0.content", or "across the fields" for a marker split over the answer's own fields. */
function fieldWords(field: string): string {
  return field === WHOLE_ANSWER ? "across the fields" : `in the field ${field}`;
}

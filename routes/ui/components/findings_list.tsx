/**
 * A run's findings, most severe first in the order the report gives them,
 * each with the samples that prove it. The samples link is an anchor to the
 * first of them (so it works without script); the browser script makes a
 * click on a finding highlight all of its samples in the timeline and the
 * sample table (`data-samples`).
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { Finding } from "../../../lib/runner/report.ts";
import { capitalized } from "../../../lib/words.ts";
import { sampleAnchor } from "../links.ts";
import { StatusBadge } from "./badge.tsx";
import { Shown } from "./shown_text.tsx";

const SEVERITY_WORD: Record<Finding["severity"], string> = {
  fail: "FAIL",
  inconclusive: "INCONCLUSIVE",
  transient: "TRANSIENT",
  note: "NOTE",
};

/** `[0,1,2,5]` → `#0–#2, #5`. */
export function sampleRanges(indexes: readonly number[]): string {
  const parts: string[] = [];
  let start: number | null = null;
  let prev: number | null = null;
  const flush = () => {
    if (start === null || prev === null) return;
    parts.push(start === prev ? `#${start}` : `#${start}–#${prev}`);
  };
  for (const i of [...indexes].sort((a, b) => a - b)) {
    if (prev !== null && i === prev + 1) {
      prev = i;
      continue;
    }
    flush();
    start = prev = i;
  }
  flush();
  return parts.join(", ");
}

/** A message as a sentence: capital first letter (not of an identifier such as `cache_records`), one final period. */
export function asSentence(message: string): string {
  const first = message.split(" ")[0] ?? "";
  const text = first.includes("_") ? message : capitalized(message);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** The findings as an ordered list, numbered F1, F2, … as the sample table cites them. */
export const FindingsList: FC<{ findings: readonly Finding[] }> = (
  { findings },
) => (
  <ol class="findings">
    {findings.map((finding, i) => {
      const n = i + 1;
      const samples = finding.sample_indexes;
      return (
        <li
          id={`finding-${n}`}
          class={`finding finding--${finding.severity}`}
          data-nav-item=""
          tabindex={-1}
          data-finding={String(n)}
          data-samples={samples.length > 0 ? samples.join(" ") : undefined}
        >
          <div class="finding__head">
            <span class="finding__number">{`F${n}`}</span>
            <StatusBadge status={SEVERITY_WORD[finding.severity]} />
            <code>{finding.code}</code>
            <span class="meta">
              <Shown text={finding.subject} />
            </span>
          </div>
          <p class="finding__message">
            <Shown text={asSentence(finding.message)} />
          </p>
          {samples.length > 0
            ? (
              <p class="finding__proof">
                Proved by{" "}
                <a
                  href={`#${sampleAnchor(samples[0]!)}`}
                  class="finding__samples"
                  data-samples={samples.join(" ")}
                  data-finding={String(n)}
                >
                  {`sample${samples.length === 1 ? "" : "s"} ${
                    sampleRanges(samples)
                  }`}
                </a>
                {finding.marker_forms && finding.marker_forms.length > 0
                  ? (
                    <span class="meta">
                      {` · marker seen ${finding.marker_forms.join(" and ")}`}
                    </span>
                  )
                  : null}
              </p>
            )
            : (
              <p class="finding__proof meta">
                {proofWithoutSamples(finding)}
              </p>
            )}
        </li>
      );
    })}
  </ol>
);

function proofWithoutSamples(finding: Finding): string {
  switch (finding.subject) {
    case "cleanup":
      return "Evidence: the cleanup section below.";
    case "baseline":
      return "Evidence: the baseline, before anything was deleted.";
    case "deletion":
      return finding.code === "erased"
        ? "Evidence: every sample of the window."
        : "Evidence: the deletion request.";
    default:
      return "No sample cites it.";
  }
}

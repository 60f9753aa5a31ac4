/**
 * Small pieces the trace pages share: a resource ref, who acted (agent or
 * memory), an event kind, the three evidence facts side by side, and a row
 * of filter chips (links that keep the rest of the selection).
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { capitalized } from "../../../lib/words.ts";
import { StatusBadge } from "./badge.tsx";
import { KeyValue } from "./key_value.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import {
  coveragePhrase,
  type EvidenceFacts as Facts,
  outcomePhrase,
  readPhrase,
} from "../trace_words.ts";

/** A typed opaque ref: `type:id`, with `@version` when recorded. */
export const RefLabel: FC<
  { type: string; id: string; version?: string | null | undefined }
> = ({ type, id, version }) => (
  <code class="ref">
    <span class="ref__type">
      <Shown text={type} />:
    </span>
    <Shown text={id} />
    {version
      ? (
        <span class="ref__version">
          @<Shown text={version} />
        </span>
      )
      : null}
  </code>
);

/** Who an event belongs to: its agent, else its memory. */
export const ActorLabel: FC<
  { agent_id: string | null; memory_id: string | null }
> = ({ agent_id, memory_id }) =>
  agent_id !== null
    ? (
      <span>
        agent <ShownCode text={agent_id} />
      </span>
    )
    : memory_id !== null
    ? (
      <span>
        memory <ShownCode text={memory_id} />
      </span>
    )
    : <span class="meta">no agent or memory</span>;

/** An event kind as a small monospace tag. */
export const KindTag: FC<{ kind: string }> = ({ kind }) => (
  <code class="kind">
    <Shown text={kind} />
  </code>
);

/** The three evidence facts, each stated on its own. */
export const EvidenceFacts: FC<{ facts: Facts; bound?: string }> = (
  { facts, bound },
) => (
  <KeyValue
    items={[
      {
        term: "Read",
        value: <StatusBadge status={facts.read_completeness} />,
        hint: `${readPhrase(facts.read_completeness, bound)}.`,
      },
      {
        term: "Instrumentation coverage",
        value: <StatusBadge status={facts.instrumentation_coverage} />,
        hint: `${capitalized(coveragePhrase(facts))}.`,
      },
      {
        term: "Outcome verification",
        value: <StatusBadge status={facts.outcome_verification} />,
        hint: outcomePhrase(facts.outcome_verification),
      },
    ]}
  />
);

/** One chip of a {@link ChipRow}. */
export interface Chip {
  label: string;
  href: string;
  current: boolean;
  count?: number;
}

/** Links that switch a view filter, the current one marked. */
export const ChipRow: FC<{ label: string; chips: readonly Chip[] }> = (
  { label, chips },
) => (
  <nav class="chips" aria-label={label}>
    <span class="chips__label">{label}:</span>
    <ul>
      {chips.map((chip) => (
        <li>
          <a
            class="chip"
            href={chip.href}
            aria-current={chip.current ? "true" : undefined}
          >
            <Shown text={chip.label} />
            {chip.count === undefined
              ? null
              : <span class="chip__count">{chip.count}</span>}
          </a>
        </li>
      ))}
    </ul>
  </nav>
);

/** A labelled piece of a compact fact line. */
export const Fact: FC<{ label: string; children?: Child }> = (
  { label, children },
) => (
  <span class="fact">
    <span class="fact__label">{label}</span> {children}
  </span>
);

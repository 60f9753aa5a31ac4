/**
 * The reference systems: the one memory pipeline under a known behaviour,
 * each with the outcome a correct checker must reach. A run that lands
 * anywhere else is a bug in Trace, not in the system. The demo app's presets
 * (healthy and every defect) are systems too, so the verdicts the demo
 * documents are checked with the rest.
 *
 * @module
 */

import type { Verdict } from "../runner/report.ts";
import {
  ANSWER_RENDERINGS,
  type AnswerRendering,
  type MemoryBehaviour,
  MemoryPipeline,
} from "../memory/mod.ts";
import {
  DEFECT_INFO,
  type DefectInfo,
  DEFECTS,
  demoBehaviour,
  type DemoDefect,
  HEALTHY,
} from "../demo/defects.ts";
import { SELF_SYSTEMS } from "./self_systems.ts";

export {
  type Expectation,
  type OwnTransportInstance,
  type OwnTransportSystemSpec,
  type PipelineSystemSpec,
  type Qualifier,
  QUALIFIERS,
  type ReferenceInstance,
  type ReferenceSystemFields,
  type ReferenceSystemSpec,
  type ReferenceTiming,
  type ScenarioHooks,
} from "./spec.ts";
import type {
  PipelineSystemSpec,
  Qualifier,
  ReferenceSystemSpec,
  ReferenceTiming,
  ScenarioHooks,
} from "./spec.ts";

/** Background records the pagination stress system holds before a run starts. */
export const PAGINATION_SEED_RECORDS = 5_000;

/** Page size of the pagination stress system's deletion scan. */
export const PAGINATION_PAGE_SIZE = 1_000;

const TIMING: ReferenceTiming = {
  document_count: 3,
  deletion_window_seconds: 5,
  sample_interval_seconds: 0.5,
};

/** A system's fields; the instance is built from `memory_behaviour`. */
interface SystemFields extends Omit<PipelineSystemSpec, "build" | "kind"> {
  /** Scenario steps after the pipeline is built: seeding, a hook on the run's events, an interrupt. */
  scenario?: (pipeline: MemoryPipeline) => Promise<ScenarioHooks>;
}

function system({ scenario, ...fields }: SystemFields): PipelineSystemSpec {
  return {
    ...fields,
    kind: "pipeline",
    build: async (time) => {
      const pipeline = new MemoryPipeline(fields.memory_behaviour, {
        scheduler: time.scheduler,
      });
      const hooks = await scenario?.(pipeline) ?? {};
      return { system: pipeline, ...hooks };
    },
  };
}

/** Interrupts the run (as Ctrl-C would) once sample `index` has been taken. */
function interruptAtSample(index: number): () => Promise<ScenarioHooks> {
  return () => {
    const operator = new AbortController();
    return Promise.resolve({
      signal: operator.signal,
      onEvent: (event) => {
        if (event.type === "sample" && event.sample.index === index) {
          operator.abort();
        }
      },
    });
  };
}

/** A stale answer cache the inventory cannot count: only retrieval shows the leak. */
const UNCOUNTED_STALE_CACHE: MemoryBehaviour = {
  cacheInvalidation: false,
  inventoryCountsCache: false,
};

/** How a leak system words one rendering. */
interface RenderingWords {
  /** Rendered or encoded, for the title. */
  kind: "rendered" | "encoded";
  /** What the app does to every answer, after "the app". */
  behaviour: string;
  /** How the marker comes back, after "carries the marker". */
  spelling: string;
}

const RENDERED_SPELLING = "in a rendered spelling";

/** What each rendering does to an answer, in words. */
const RENDERING_WORDS: Readonly<Record<AnswerRendering, RenderingWords>> = {
  markdown: {
    kind: "rendered",
    behaviour: "escapes Markdown in every answer (trace\\_canary\\_…)",
    spelling: RENDERED_SPELLING,
  },
  html: {
    kind: "rendered",
    behaviour:
      "answers as HTML with character references (&lowbar; for underscores, &#NN; for digits)",
    spelling: RENDERED_SPELLING,
  },
  "html-named": {
    kind: "rendered",
    behaviour:
      "answers as HTML whose letters are named references of their double-struck forms (&topf;&ropf;&aopf;…, shown as 𝕥𝕣𝕒…), in a span whose quoted title holds a >",
    spelling: RENDERED_SPELLING,
  },
  reworded: {
    kind: "rendered",
    behaviour:
      "rewords every answer in upper case with spaces for separators, as a model might",
    spelling: RENDERED_SPELLING,
  },
  "full-width": {
    kind: "rendered",
    behaviour: "answers in full-width forms (ｔｒａｃｅ＿ｃａｎａｒｙ…)",
    spelling: RENDERED_SPELLING,
  },
  wrapped: {
    kind: "rendered",
    behaviour:
      "hard-wraps answers every 16 characters, mid-word, with soft hyphens",
    spelling: RENDERED_SPELLING,
  },
  homoglyphs: {
    kind: "rendered",
    behaviour:
      "writes every answer with Cyrillic look-alikes for the Latin letters that have one (trасе_саnаrу…, а for a, с for c)",
    spelling: "in Cyrillic look-alike letters (rendering trait homoglyphs)",
  },
  "data-uri": {
    kind: "encoded",
    behaviour:
      "ships every answer as an attachment, a base64 data URI (attachment: data:text/plain;base64,UmVsZXZhbnQg…)",
    spelling: "base64-encoded in a data URI (rendering trait base64)",
  },
  hex: {
    kind: "encoded",
    behaviour:
      "answers in lowercase hex of the text's UTF-8 bytes (52656c6576616e74…)",
    spelling: "hex-encoded (rendering trait hex)",
  },
  "spaced-hex": {
    kind: "encoded",
    behaviour:
      "answers in lowercase hex of the text's UTF-8 bytes with a space between bytes (52 65 6c 65 76 61 6e 74…)",
    spelling: "hex-encoded a byte at a time (rendering trait hex)",
  },
  hexdump: {
    kind: "encoded",
    behaviour:
      "answers with a hexdump -C dump of the text's UTF-8 bytes, offsets and a text column beside them (00000000  52 65 6c 65 … |Relevant…|)",
    spelling: "in a hex dump with offsets (rendering trait hex)",
  },
  "od-words": {
    kind: "encoded",
    behaviour:
      "answers with an od -x dump of the text's UTF-8 bytes, octal offsets and 2-byte words in little-endian byte order (0000000 6552 656c 6176 …)",
    spelling:
      "in a hex dump of 2-byte words in little-endian byte order (rendering trait hex)",
  },
  "percent-url": {
    kind: "encoded",
    behaviour:
      "answers with a search link whose query percent-encodes every byte (https://example.invalid/search?q=%52%65%6C…)",
    spelling:
      "percent-encoded in a link's query (rendering trait percent_encoding)",
  },
  "escaped-json": {
    kind: "encoded",
    behaviour:
      'answers with a JSON document encoded twice, every character of its string a \\u escape ({"text":"\\u0052\\u0065…"})',
    spelling:
      "as \\u escapes in a JSON string (rendering trait string_escapes)",
  },
};

/** A stale cached answer that comes back in another spelling: FAIL on retrieval alone. */
function renderedLeak(rendering: AnswerRendering): PipelineSystemSpec {
  const words = RENDERING_WORDS[rendering];
  return system({
    name: `rendered-${rendering}`,
    title: `Stale answer, ${words.kind} (${rendering})`,
    behaviour:
      `Deletion never invalidates an answer cache the inventory cannot count, so every store reads 0; the app ${words.behaviour}`,
    expected: {
      verdict: "FAIL",
      qualifier: null,
      findings: ["marker_retrievable:retrieval"],
      cleanup_complete: false,
    },
    reason:
      `Every store reads 0, but the cached answer still carries the marker ${words.spelling}, which is retrieval evidence like an exact one (a byte-exact check would PASS)`,
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: {
      ...UNCOUNTED_STALE_CACHE,
      answerRendering: [rendering],
    },
  });
}

/** Writes `count` background records of other tenants, ahead of anything a run ingests. */
async function seedOtherTenants(
  pipeline: MemoryPipeline,
  count: number,
  tenants = 5,
): Promise<void> {
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const namespace = `seed-tenant-${i % tenants}`;
    writes.push(
      pipeline.ingest(
        namespace,
        `seed-doc-${i}`,
        `Background record ${i} of ${namespace}.`,
      ),
    );
  }
  await Promise.all(writes);
}

const erased = "erased:deletion";

/** Name of the reference system running the demo app with `defect` (`null`: healthy). */
function demoSystemName(defect: DemoDefect | null): string {
  return `demo-${defect ?? "healthy"}`;
}

/** The demo app with one preset, expected to land where the demo's docs say. */
function demoSystem(defect: DemoDefect | null): PipelineSystemSpec {
  const info = defect === null ? HEALTHY : DEFECT_INFO[defect];
  return system({
    name: demoSystemName(defect),
    title: `Demo app, ${defect ?? "healthy"}`,
    behaviour: info.description,
    expected: {
      verdict: info.verdict,
      qualifier: demoQualifier(info),
      findings: info.findings,
      cleanup_complete: info.cleanupComplete,
    },
    reason: info.reason,
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: demoBehaviour(defect),
  });
}

/** A demo PASS is transient when its proof is a transient residual, immediate otherwise. */
function demoQualifier(info: DefectInfo): Qualifier | null {
  if (info.verdict !== "PASS") return null;
  const transient = info.findings.some((f) =>
    f.startsWith("transient_residual:")
  );
  return transient ? "transient" : "immediate";
}

/** Every reference system, in display order. */
export const REFERENCE_SYSTEMS: readonly ReferenceSystemSpec[] = [
  system({
    name: "correct",
    title: "Correct design",
    behaviour:
      "Deletes source, vectors and the cached answers built from the deleted ids, synchronously",
    expected: { verdict: "PASS", qualifier: "immediate", findings: [erased] },
    reason: "Every store reads 0 and the marker is gone from the first sample",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: {},
  }),
  system({
    name: "stale-cache",
    title: "Stale answer cache",
    behaviour: "Deletion never invalidates the answer cache",
    expected: {
      verdict: "FAIL",
      qualifier: null,
      findings: [
        "residual_store:cache_records",
        "marker_retrievable:retrieval",
      ],
    },
    reason:
      "The cached answer keeps serving the marker and cache_records stays at 1",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { cacheInvalidation: false },
  }),
  system({
    name: "worker-resurrect",
    title: "Async re-index worker resurrects vectors",
    behaviour:
      "Each ingest queues a re-embedding job carrying its text behind a stalled worker; the scenario releases the worker at the third sample, mid-window, and the backlog writes the deleted vectors back",
    expected: {
      verdict: "FAIL",
      qualifier: null,
      findings: ["residual_store:vector_records"],
    },
    reason:
      "The first samples are clean, then vector_records comes back and is still there at the final sample",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { stalledReembedding: true },
    scenario: (pipeline) =>
      Promise.resolve({
        onEvent: (event) => {
          if (event.type === "sample" && event.sample.index === 2) {
            pipeline.releaseBacklog();
          }
        },
      }),
  }),
  system({
    name: "tombstone-late-compaction",
    title: "Tombstones compacted after the window",
    behaviour:
      "Deletion tombstones source and vectors; compaction purges them 60 s later, long after the 5 s window",
    expected: {
      verdict: "FAIL",
      qualifier: null,
      findings: [
        "residual_store:source_records",
        "residual_store:vector_records",
      ],
    },
    reason:
      "The inventory honestly counts tombstoned records, which are still stored at the final sample",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { deletion: "tombstone", compactAfterMs: 60_000 },
  }),
  system({
    name: "tombstone-window-compaction",
    title: "Tombstones compacted inside the window",
    behaviour:
      "Deletion tombstones source and vectors; compaction purges them 2 s later, inside the 5 s window",
    expected: {
      verdict: "PASS",
      qualifier: "transient",
      findings: [
        "transient_residual:source_records",
        "transient_residual:vector_records",
      ],
    },
    reason:
      "Tombstones are counted until the compaction at 2 s, then every store reads 0 (transient residual)",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { deletion: "tombstone", compactAfterMs: 2_000 },
  }),
  system({
    name: "paginated-delete",
    title: "Paginated deletion misses later pages",
    behaviour:
      `The shared table holds ${PAGINATION_SEED_RECORDS} records of other tenants before the run; deletion pages through it ${PAGINATION_PAGE_SIZE} at a time but reads only the first page, where the canaries never are`,
    expected: {
      verdict: "FAIL",
      qualifier: null,
      findings: [
        "residual_store:source_records",
        "residual_store:vector_records",
        "marker_retrievable:retrieval",
      ],
    },
    reason:
      "None of the canaries is on page one, so every store keeps them and the marker stays retrievable",
    blind_spot: null,
    timing: { ...TIMING, document_count: 200 },
    memory_behaviour: { deletionFirstPageOnly: PAGINATION_PAGE_SIZE },
    scenario: async (pipeline) => {
      await seedOtherTenants(pipeline, PAGINATION_SEED_RECORDS);
      return {};
    },
  }),
  system({
    name: "eventual-vector-propagation",
    title: "Eventual vector propagation inside the window",
    behaviour:
      "Vector deletion reaches the index 2.5 s after the acknowledgement, inside the 5 s window",
    expected: {
      verdict: "PASS",
      qualifier: "transient",
      findings: ["transient_residual:vector_records"],
    },
    reason:
      "vector_records lingers for 2.5 s and then reads 0 until the end of the window",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { vectorDelayMs: 2_500 },
  }),
  system({
    name: "inventory-first-page",
    title: "Inventory skips later pages",
    behaviour:
      "Deletion moves records to an archive segment purged after an hour; the inventory reads only the first page of a listing whose later pages hold that archive, and still answers complete: true",
    expected: {
      verdict: "PASS",
      qualifier: "blind_spot",
      findings: [erased],
    },
    reason:
      "Every reported count is 0 and the marker is not retrievable, so the contract must PASS",
    blind_spot:
      "The deleted records are still stored; a black-box contract cannot see a store the adapter under-reports while claiming complete: true",
    timing: TIMING,
    memory_behaviour: {
      deletion: "tombstone",
      compactAfterMs: 3_600_000,
      inventoryFirstPageOnly: 100,
    },
  }),
  system({
    name: "control-collateral",
    title: "Control namespace collateral deletion",
    behaviour:
      "Deletion wipes every namespace of the tenant instead of the supplied ids",
    expected: {
      verdict: "INCONCLUSIVE",
      qualifier: null,
      findings: ["control_lost:control"],
    },
    reason:
      "The unrelated control record disappears, so no sample can be trusted",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { deletionScope: "tenant" },
  }),
  system({
    name: "control-move",
    title: "Deletion moves records into another namespace",
    behaviour:
      "Deletion re-files the records, source and vectors, under the tenant's newest other namespace instead of removing them; in a run that is the control namespace",
    expected: {
      verdict: "INCONCLUSIVE",
      qualifier: null,
      findings: ["control_grew:control"],
      cleanup_complete: false,
    },
    reason:
      "The test namespace reads 0 and the control query is answered from its cache, so no answer carries the marker, but the control namespace counts the three canaries beside its record: the deletion may have moved them, so nothing can be decided",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { deletion: "move" },
  }),
  system({
    name: "interrupted-window",
    title: "Interrupted while vectors linger",
    behaviour:
      "Vector deletion reaches the index 4 s after the acknowledgement; the operator interrupts the run at the fourth sample (1.5 s), while vector_records still counts every canary",
    expected: {
      verdict: "INCONCLUSIVE",
      qualifier: null,
      findings: ["interrupted:window"],
      cleanup_complete: true,
      state: "interrupted",
    },
    reason:
      "An interrupted window has no final sample, so the vectors still counted at 1.5 s decide nothing; left alone the run would PASS with a transient residual",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { vectorDelayMs: 4_000 },
    scenario: interruptAtSample(3),
  }),
  ...ANSWER_RENDERINGS.map(renderedLeak),
  system({
    name: "rendered-correct",
    title: "Correct design behind a renderer",
    behaviour:
      "Deletes synchronously like the correct design; every answer is Markdown-escaped, then written as HTML with character references",
    expected: { verdict: "PASS", qualifier: "immediate", findings: [erased] },
    reason:
      "Rendering changes spelling only: the rendered marker and control are recognised at the baseline, and after the deletion no answer carries the marker",
    blind_spot: null,
    timing: TIMING,
    memory_behaviour: { answerRendering: ["markdown", "html"] },
  }),
  ...[null, ...DEFECTS].map(demoSystem),
  ...SELF_SYSTEMS,
];

/** Display label of an expectation, e.g. `PASS (transient)` or `PASS (blind spot)`. */
export function expectationLabel(
  verdict: Verdict,
  qualifier: Qualifier | null,
): string {
  if (verdict !== "PASS" || qualifier === null || qualifier === "immediate") {
    return verdict;
  }
  return qualifier === "transient" ? "PASS (transient)" : "PASS (blind spot)";
}

/** Ledger target id of a reference system. */
export function referenceTargetId(name: string): string {
  return `reference-${name}`;
}

/** The system a reference target id names, or `null`. */
export function systemOfTarget(targetId: string): string | null {
  return targetId.startsWith("reference-")
    ? targetId.slice("reference-".length)
    : null;
}

/** Looks a system up by name. */
export function findSystem(
  name: string,
  systems: readonly ReferenceSystemSpec[] = REFERENCE_SYSTEMS,
): ReferenceSystemSpec | undefined {
  return systems.find((spec) => spec.name === name);
}

/** Random synthetic identifiers: namespaces, document ids, markers and run ids. */

import { newMarker } from "./marker/mod.ts";

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(buffer, (byte) => byte.toString(16).padStart(2, "0")).join(
    "",
  );
}

/** Identifiers of one run; every one is fresh and random. */
export interface RunIdentifiers {
  /** `run-<UTC timestamp>-<random>`. */
  runId: string;
  /** `trace-test-…`: where the canary documents go. */
  testNamespace: string;
  /** `trace-control-…`: where the control record goes. */
  controlNamespace: string;
  /** `trace_canary_…`: carried by every canary document. */
  marker: string;
  /** The control record's own marker. */
  controlMarker: string;
  /** `trace-doc-…` ids of the canary documents. */
  documentIds: string[];
  /** The control record's id. */
  controlId: string;
}

/** A sortable, unique run id such as `run-20261129T214455Z-3f9a1c07b2e4`. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `run-${stamp}-${randomHex(6)}`;
}

/** Fresh namespaces, ids and markers for a run of `documentCount` documents. */
export function newRunIdentifiers(
  documentCount: number,
  now?: Date,
): RunIdentifiers {
  return {
    runId: newRunId(now),
    testNamespace: `trace-test-${randomHex(8)}`,
    controlNamespace: `trace-control-${randomHex(8)}`,
    marker: newMarker(),
    controlMarker: newMarker(),
    documentIds: Array.from(
      { length: documentCount },
      () => `trace-doc-${randomHex(8)}`,
    ),
    controlId: `trace-doc-${randomHex(8)}`,
  };
}

/** Synthetic document text carrying `marker`; never resembles user data. */
export function canaryText(
  marker: string,
  index: number,
  total: number,
): string {
  return `Synthetic Trace canary record ${
    index + 1
  } of ${total}. Deletion probe ${marker}.`;
}

/** Synthetic control text carrying its own marker. */
export function controlText(marker: string): string {
  return `Synthetic Trace control record. It must survive the test deletion. Probe ${marker}.`;
}

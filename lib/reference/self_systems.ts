/**
 * Trace itself as a reference system: the observability index behind the
 * staging adapter contract (`lib/obs/self_contract/`), in a private
 * in-memory database, reached through its own in-process transport. Its
 * deletions go through the index's erasure path, so the suite checks that
 * Trace forgets what it is told to, and that a defective erasure (one that
 * skips the previews) is caught.
 *
 * @module
 */

import { openMemoryDb } from "../db.ts";
import { initializeObs } from "../obs/mod.ts";
import {
  createSelfStagingAdapter,
  SELF_STAGING_APPLICATION,
} from "../obs/self_contract/mod.ts";
import type {
  Expectation,
  OwnTransportSystemSpec,
  ReferenceTiming,
} from "./spec.ts";
import { handlerTransport } from "./transport.ts";

const TIMING: ReferenceTiming = {
  document_count: 3,
  deletion_window_seconds: 5,
  sample_interval_seconds: 0.5,
};

interface SelfSystemFields {
  name: string;
  title: string;
  behaviour: string;
  expected: Expectation;
  reason: string;
  skipPreviews: boolean;
}

function selfSystem(fields: SelfSystemFields): OwnTransportSystemSpec {
  const { skipPreviews, ...spec } = fields;
  return {
    ...spec,
    kind: "own_transport",
    blind_spot: null,
    timing: TIMING,
    build: async (time) => {
      const db = openMemoryDb();
      try {
        await initializeObs(db);
      } catch (error) {
        db.close();
        throw error;
      }
      const adapter = createSelfStagingAdapter(db, {
        key: crypto.getRandomValues(new Uint8Array(32)),
        skipPreviews,
      });
      return {
        transport: handlerTransport((op, body) => adapter.handle(op, body), {
          time,
        }),
        storedCounts: (namespace) => adapter.storedCounts(namespace),
        close: () => db.close(),
      };
    },
  };
}

/** Trace's own index, with its erasure and with a defective one. */
export const SELF_SYSTEMS: readonly OwnTransportSystemSpec[] = [
  selfSystem({
    name: "trace-index",
    title: "Trace's own index",
    behaviour:
      `The observability index behind the staging contract: documents are events of application ${SELF_STAGING_APPLICATION} with their text as preview, and deletion is a subject erasure of the events of the supplied document ids in the namespace (envelopes, index rows, resource refs and previews)`,
    expected: {
      verdict: "PASS",
      qualifier: "immediate",
      findings: ["erased:deletion"],
      cleanup_complete: true,
    },
    reason:
      "The erasure removes envelopes, index rows and previews in one transaction, so every store reads 0 and no preview holds the marker from the first sample",
    skipPreviews: false,
  }),
  selfSystem({
    name: "trace-index-skips-previews",
    title: "Trace's own index, erasure skips previews",
    behaviour:
      "The same index with a defective erasure that leaves the previews table alone; an index row goes only with its previews, so the rows stay with them",
    expected: {
      verdict: "FAIL",
      qualifier: null,
      findings: [
        "residual_store:vector_records",
        "residual_store:cache_records",
        "marker_retrievable:retrieval",
      ],
      cleanup_complete: false,
    },
    reason:
      "The envelopes go, but every preview and its index row stay: the marker stays searchable and both stores keep counting the documents",
    skipPreviews: true,
  }),
];

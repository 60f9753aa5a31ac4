/**
 * What each finding code means, where its proof is in a report, and what to
 * check in the application. One entry per code of the rules revision
 * (`FINDING_CODES`); the type makes a code without an entry a compile error.
 *
 * @module
 */

import type { RepeatedOperation } from "./_operation_answers.ts";
import { FINDING_CODES, type FindingCode } from "./rules.ts";

/** How to read one finding code. */
export interface FindingGuide {
  /** What the code says about the run, in one or two sentences. */
  meaning: string;
  /** Where the evidence is: sample indexes, or the report section to read. */
  proof: string;
  /** What to look at in the application (or the adapter), in order. */
  checks: string[];
}

/** The check about an operation whose handler failed every request of the run. */
function failingHandler(op: RepeatedOperation): string {
  return `the adapter's logs and its /${op} handler for the error it answers: every /${op} request of the run answered an HTTP 5xx status from the first one on, so the operation never worked, rather than stopped working under rate limits or a restart`;
}

/**
 * The checks a run's own evidence can single out, named so that
 * `findingChecks` (finding_checks.ts) can put the one a report points at
 * first; the guides below list the same text.
 */
export const EVIDENCE_CHECKS = {
  /** A store, or the marker, read 0 after the deletion and then came back. */
  restored: {
    source_records:
      "no background job or replica restores the rows after the acknowledgement",
    vector_records:
      "an asynchronous indexing or re-embedding worker cannot write vectors back for deleted ids (a tombstone or barrier before it runs)",
    cache_records:
      "nothing caches a new answer built from a deleted document after the deletion (a query answered from a store that still held it, or a background refresh)",
    retrieval:
      "nothing makes a deleted document retrievable again after the deletion (a re-index job, a replica or a cache refill)",
  },
  /** The marker was retrievable while the answer cache still held records. */
  cachedAnswer:
    "no cached answer or prompt context still carries the deleted text",
  /** The marker was in another field of the answer, or in the control query's answer. */
  answerElsewhere:
    "no field of the /query answer carries the deleted text or echoes the query (sources, retrieved chunks, keys all count; samples[i].marker_found_in names the field), and no namespace's query returns another namespace's documents",
  /**
   * A baseline request reached no adapter route: ingest failed (no canary
   * was stored), or an operation answered HTTP 404, 405 or 501.
   */
  adapterReached:
    "base_url points at the trace-staging/1 adapter and the adapter is running: it answers POST base_url/ingest, /query, /inventory and /delete, and an HTTP 404, 405 or 501, a refused connection, an unknown host, a TLS error, a redirect or an answer that is not JSON means the requests reached another service, or none",
  /** Ingest answered an id other than the one it was sent. */
  idsPreserved:
    '/ingest answers {"id": …} with the id it was sent, not one of its own: the runner deletes, counts and cleans up by the ids it supplies',
  /** The checkpoint could not be written before an ingest, so ingest stopped. */
  checkpointWritable:
    "disk space and permissions of the data directory: a run writes its checkpoint before each ingest, so that every id it issued can be cleaned up, and stops when it cannot",
  /** The baseline's requests succeeded, but its inventory counted fewer records than were ingested. */
  ingestVisible:
    "/ingest makes documents visible in every store before it returns (this protocol needs synchronous visibility)",
  /** The baseline's inventory counted more records than were ingested. */
  countedOnce:
    "/inventory counts only the namespace it is given, and each document once in each store (not its chunks or embeddings): the baseline expects document_count source and vector records",
  /** The baseline query did not return a marker. */
  queryRetrieves: "/query retrieves a freshly ingested marker",
  /** An inventory answered `complete: false`. */
  inventoryComplete:
    "the inventory enumerates every page and every declared store for the namespace",
  /** A request ran out of time. */
  timeout:
    "the adapter answers within the configured timeout_seconds of each operation",
  /** An answer was not one strict, uncompressed JSON object of at most 1 MiB: its syntax, encoding, compression, framing or size. */
  malformed:
    "answers are one uncompressed JSON object (no Content-Encoding, duplicate keys, NaN or trailing bytes) and at most 1 MiB",
  /**
   * An answer parsed as JSON but not in the contract's shape: a field
   * missing or of another type, an error key in a 200 answer, or JSON of
   * another type than an object.
   */
  contractFields:
    'answers hold the fields of the trace-staging/1 contract with their documented types (README.md, "The adapter contract"): /ingest {"id": string}, /query an object with a string text, /inventory a boolean complete and integer source_records, vector_records and cache_records, /delete {"acknowledged": true}; and a failure is a status other than HTTP 200, not an error key in a 200 answer',
  /** An answer echoed the run's bearer token, so it could not show the marker gone. */
  tokenNotEchoed:
    "the adapter never returns its bearer token in an answer (echoed request headers, a debug field): Trace replaces the token before reading an answer, so an answer that holds it cannot show the marker gone",
  /** An answer's search for the marker was cut short, or failed. */
  searchableAnswers:
    "the adapter's answers can be searched for the marker within timeout_seconds: megabytes of text, or nesting thousands of levels deep, are not read",
  /** A request answered HTTP 401 or 403: the adapter refused the bearer token, or that none was sent. */
  tokenAccepted:
    "token_env names the environment variable that holds the token the adapter expects, the token may call every operation, and the adapter is served over https:// (Trace sends a token only there)",
  /** A request found no adapter, or an HTTP error status. */
  unavailable:
    "rate limits or restarts of the staging application during the run",
  /** Two or more requests of an operation, all of them, answered an HTTP 5xx status of the application's own, from the first one on. */
  failingHandler: {
    query: failingHandler("query"),
    inventory: failingHandler("inventory"),
    delete: failingHandler("delete"),
  },
  /** An interrupted run whose own cleanup completed: nothing is left to remove. */
  rerun: "rerun when nothing will interrupt the window",
} as const;

const RESTORED = EVIDENCE_CHECKS.restored;

const STORE_CHECKS: Record<string, string[]> = {
  source_records: [
    "the delete path removes the source rows for exactly the supplied ids (not a soft-delete flag the inventory still counts)",
    RESTORED.source_records,
    "the inventory counts the same table the delete path writes",
  ],
  vector_records: [
    "the delete path removes the vectors of the deleted documents, not only their source rows",
    RESTORED.vector_records,
    "compaction of tombstoned vectors happens inside the declared deletion window",
  ],
  cache_records: [
    "cached answers that were built from a deleted document are invalidated on deletion",
    "the cache key includes what the answer was derived from, so eviction can find it",
    "cache time-to-live is shorter than the declared deletion window if invalidation is not possible",
    RESTORED.cache_records,
  ],
  retrieval: [
    "the query path no longer retrieves deleted documents (vector index, keyword index, answer cache)",
    EVIDENCE_CHECKS.cachedAnswer,
    "the marker check survives rendering and encoding: Markdown escapes, HTML entities, reworded answers and base64, hex, percent-encoded or string-escaped text still count",
    EVIDENCE_CHECKS.answerElsewhere,
    RESTORED.retrieval,
  ],
};

const GUIDES: Record<FindingCode, FindingGuide> = {
  marker_retrievable: {
    meaning:
      "The deleted synthetic marker was still returned through /query at the final sample of the deletion window: a user would still see deleted data. The run FAILs.",
    proof:
      "sample_indexes lists every sample whose marker_seen was true; the last one is the final sample, which decides the verdict",
    checks: STORE_CHECKS.retrieval!,
  },
  residual_store: {
    meaning:
      "A store still counted records of the deleted documents at the final sample of the deletion window. The subject names the store (source, vector or cache). The run FAILs.",
    proof:
      "sample_indexes lists every sample whose inventory counted the store above 0; read samples[i].inventory[subject]",
    checks: (["source_records", "vector_records", "cache_records"] as const)
      .map((store) => `${store}: ${STORE_CHECKS[store]!.join("; ")}`),
  },
  transient_residual: {
    meaning:
      "Deleted data was seen early in the window and was gone by the final sample: the deletion propagates, but not at once. Recorded, not failing.",
    proof:
      "sample_indexes lists the samples where the subject was still present; later samples read 0",
    checks: [
      "whether the observed propagation time is acceptable for your users and stays inside the declared window",
      "which component lags (async worker, replica, cache TTL) and whether it is bounded",
    ],
  },
  intermittent_residual: {
    meaning:
      "Deleted data went away and came back during the window (a stale replica behind a load balancer, a cache refill, a re-index), and too few clean reads follow its last sighting to show it is gone for good: as many clean reads came before a comeback. INCONCLUSIVE.",
    proof:
      "sample_indexes lists the samples where the subject was present; the samples between them and after the last one read 0",
    checks: [
      "a replica or shard that still serves deleted data (reads that alternate between an up-to-date copy and a stale one)",
      "a longer deletion_window_seconds, so that more clean reads follow the last sighting than ever came before a comeback",
    ],
  },
  window_end_unobserved: {
    meaning:
      "Deleted data was last seen inside the window, and the next read came more than one sample interval after the window ended because the adapter's answers took longer than the interval: the run never read whether the data was gone when the window ended. INCONCLUSIVE.",
    proof:
      "sample_indexes lists the samples where the subject was present and, last, the first clean read after them; compare their started_at_seconds and ended_at_seconds with timing.deletion_window_seconds and timing.sample_interval_seconds",
    checks: [
      "the adapter answers /inventory and /query well within sample_interval_seconds (each sample sends four requests, one after another)",
      "a deletion_window_seconds or sample_interval_seconds long enough for the adapter's answers, so that a read lands close to the window's end",
    ],
  },
  baseline_failed: {
    meaning:
      "Before deletion, the documents, the marker or the control were not all present and retrievable, so the run cannot show that deletion removed anything. INCONCLUSIVE.",
    proof:
      "no samples: read the report's baseline section (inventory, marker_seen, control_inventory, control_seen, problems)",
    // The first check leads when the run's evidence points at none of the
    // others (finding_checks.ts): a baseline whose requests reached no adapter.
    checks: [
      EVIDENCE_CHECKS.adapterReached,
      EVIDENCE_CHECKS.ingestVisible,
      EVIDENCE_CHECKS.queryRetrieves,
      "/inventory counts source and vector records of the test namespace and answers complete: true",
      EVIDENCE_CHECKS.countedOnce,
      EVIDENCE_CHECKS.idsPreserved,
    ],
  },
  delete_unacknowledged: {
    meaning:
      "/delete did not answer {acknowledged: true}, so the window has no defined start. INCONCLUSIVE.",
    proof: "no samples: read the report's deletion section (error)",
    checks: [
      '/delete answers HTTP 200 with {"acknowledged": true} once the deletion was accepted',
      "/delete accepts ids it does not know (deleting them is a no-op, not an error)",
    ],
  },
  request_error: {
    meaning:
      "Requests failed or answered malformed JSON during the window, so some observations are missing. INCONCLUSIVE unless data was left at the final sample.",
    proof:
      "sample_indexes lists the samples with errors; read samples[i].errors (operation, namespace, failure class)",
    checks: [
      EVIDENCE_CHECKS.timeout,
      EVIDENCE_CHECKS.malformed,
      EVIDENCE_CHECKS.contractFields,
      EVIDENCE_CHECKS.unavailable,
      EVIDENCE_CHECKS.searchableAnswers,
      EVIDENCE_CHECKS.tokenNotEchoed,
      EVIDENCE_CHECKS.tokenAccepted,
    ],
  },
  inventory_incomplete: {
    meaning:
      "The test inventory answered complete: false, so its counts cannot prove erasure. INCONCLUSIVE.",
    proof:
      "sample_indexes lists the samples whose inventory had complete: false",
    checks: [
      EVIDENCE_CHECKS.inventoryComplete,
      "answer complete: true only when it did",
    ],
  },
  control_inventory_incomplete: {
    meaning:
      "The control inventory answered complete: false, so the control record cannot be shown intact. INCONCLUSIVE.",
    proof:
      "sample_indexes lists the samples whose control_present is null without a request error",
    checks: [
      "the inventory of the control namespace enumerates every page and store",
    ],
  },
  control_lost: {
    meaning:
      "The unrelated control record disappeared or stopped being retrievable: the deletion reached data outside the supplied ids, or the adapter misreports. INCONCLUSIVE, and a sign of over-deletion.",
    proof:
      "sample_indexes lists the samples where control_present or control_seen was false",
    checks: [
      "the delete path deletes only the supplied ids in the supplied namespace (never namespace- or tenant-wide)",
      "namespaces are isolated from each other in every store",
    ],
  },
  control_grew: {
    meaning:
      "After the deletion the control namespace counted more source or vector records than at the baseline (its cache is not compared: the runner's own control queries fill it). Only the application writes records there, so the deletion may have moved or copied the deleted records into another namespace instead of erasing them. INCONCLUSIVE: the counts cannot show the extra records are the canaries (when the control query returns the canaries' marker, retrieval FAILs).",
    proof:
      "sample_indexes lists the samples whose control_inventory counts more source_records or vector_records than baseline.control_inventory; the message names each such store with both counts",
    checks: [
      "the delete path removes the supplied ids from every store rather than moving, re-filing or archiving them under another namespace",
      "no write path (an archive, a re-index or a fallback namespace) copies a namespace's records into another namespace",
    ],
  },
  interrupted: {
    meaning:
      "The run stopped before its final sample (cancelled, or its process ended), so there is no final observation. INCONCLUSIVE, never PASS.",
    proof:
      "no samples decide it: the window ended early; read cleanup to see what was removed",
    checks: [
      "remove any synthetic ids still listed in the run's issued ids and cleanup.remaining",
      EVIDENCE_CHECKS.rerun,
    ],
  },
  cleanup_incomplete: {
    meaning:
      "After the run, synthetic records were still counted in the test or control namespace, or a cleanup deletion was not acknowledged. Turns a PASS into INCONCLUSIVE; a FAIL stays FAIL (then it is a note).",
    proof:
      "no samples: read the report's cleanup section (deletes, remaining, marker_seen, problems)",
    checks: [
      "remove the remaining synthetic records through the application's normal tools",
      "the same store that failed the window is usually the one cleanup could not empty",
    ],
  },
  unread_inventory_count: {
    meaning:
      "The test inventory answered a count beside source_records, vector_records and cache_records (a history, an audit log, a second index): Trace reads only those three, so whatever that store keeps after the deletion decides nothing. A note; the verdict stands on the three counts.",
    proof:
      "the message names each key that reads as a field name with its count at the reading that speaks for it (the final sample first) and counts the others; sample_indexes lists the samples whose inventory answered one. The report keeps only the contract's counts",
    checks: [
      "count every store that holds the namespace's data in source_records, vector_records or cache_records (add a store's records to the count it belongs with), so deleted data left there fails the run",
      "a breakdown of the counts belongs in a nested object (as the Mem0 adapter's stores), which Trace does not read as a count",
      "remove a top-level count that is not about the namespace's data",
    ],
  },
  erased: {
    meaning:
      "Every store read 0 and the marker was gone at the final sample: the deletion contract held for this run.",
    proof: "every sample from the first to the final one",
    checks: [
      "nothing to fix; the contract only sees what the adapter's inventory and query paths expose",
    ],
  },
  checkpoint_unwritten: {
    meaning:
      "The checkpoint file could not be marked completed; the report itself is complete. A note.",
    proof: "no samples: the checkpoint path in the data directory",
    checks: ["disk space and permissions of the data directory"],
  },
};

/** The finding codes of the rules revision, in a stable order. */
export const FINDING_CODE_NAMES = Object.keys(FINDING_CODES).sort() as [
  FindingCode,
  ...FindingCode[],
];

/** Every subject some finding code carries, in a stable order. */
export const FINDING_SUBJECTS = [
  ...new Set(Object.values(FINDING_CODES).flatMap((rule) => rule.subjects)),
].sort() as [string, ...string[]];

/** How to read `code`; with a `subject`, the checks of that store or check come first. */
export function findingGuide(
  code: FindingCode,
  subject?: string,
): FindingGuide {
  const guide = GUIDES[code];
  const specific = subject !== undefined && Object.hasOwn(STORE_CHECKS, subject)
    ? STORE_CHECKS[subject]
    : undefined;
  if (specific === undefined) return guide;
  if (code === "residual_store") return { ...guide, checks: specific };
  if (code === "transient_residual" || code === "intermittent_residual") {
    return { ...guide, checks: [...specific, ...guide.checks] };
  }
  return guide;
}

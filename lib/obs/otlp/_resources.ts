/**
 * Resource references and selection decisions read from span attributes:
 * memory stores and records, data sources, retrieved documents
 * (`gen_ai.retrieval.documents`, `gen_ai.memory.records`, OpenInference
 * `retrieval.documents.N.document.*`) and reranker input/output documents.
 * Only ids, ranks and scores are read here; document text stays content.
 *
 * @module
 */

import * as v from "valibot";
import {
  LIMITS,
  type ResourceRef,
  ResourceRefSchema,
  type ResourceRole,
  type Selection,
  type SelectionCandidate,
} from "../model.ts";
import { type OtlpAttributes, type OtlpValue, scalarText } from "./decode.ts";

/** A document a retriever returned: its id and, when known, its score. */
interface RankedDocument {
  id: string;
  score: number | null;
}

/** Resources and the selection decision of one span. */
export interface SpanResources {
  resources: ResourceRef[];
  selection: Selection | null;
  /** References left out: invalid ids, or beyond the resource bound. */
  dropped: number;
}

const RECORD_ROLES: Record<string, ResourceRole> = {
  memory_write: "written",
  memory_update: "written",
  memory_delete: "deleted",
  memory_search: "retrieved",
};

const STORE_ROLES: Record<string, ResourceRole> = {
  memory_store_create: "written",
  memory_store_delete: "deleted",
};

/** Reads the resources and selection of a span whose mapped kind is `kind`. */
export function spanResources(
  attributes: OtlpAttributes,
  kind: string,
): SpanResources {
  const refs: ResourceRef[] = [];
  for (const id of ids(attributes.get("gen_ai.memory.store.id"))) {
    refs.push({
      type: "memory_store",
      id,
      role: STORE_ROLES[kind] ?? "referenced",
    });
  }
  for (const id of ids(attributes.get("gen_ai.data_source.id"))) {
    refs.push({ type: "data_source", id, role: "referenced" });
  }
  const recordRole = RECORD_ROLES[kind] ?? "referenced";
  for (const id of ids(attributes.get("gen_ai.memory.record.id"))) {
    refs.push({ type: "memory_record", id, role: recordRole });
  }
  // Records a write, update or delete names were not retrieved: they take its role.
  if (recordRole !== "retrieved" && recordRole !== "referenced") {
    for (const doc of documentList(attributes.get("gen_ai.memory.records"))) {
      refs.push({ type: "memory_record", id: doc.id, role: recordRole });
    }
  }
  const docType = kind === "memory_search" ? "memory_record" : "document";
  const retrieved = retrievedDocuments(attributes, recordRole);
  for (const doc of retrieved) {
    refs.push({ type: docType, id: doc.id, role: "retrieved" });
  }
  const rerank = rerankedDocuments(attributes);
  for (const doc of rerank?.inputs ?? []) {
    refs.push({ type: docType, id: doc.id, role: "retrieved" });
  }
  const { resources, dropped } = boundResources(refs);
  const selection = rerank
    ? rerankSelection(rerank, docType)
    : retrievalSelection(retrieved, docType, kind);
  return { resources, selection, dropped };
}

/** Ids from a string, a number or an array of them. */
function ids(value: OtlpValue | undefined): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => ids(item));
  const id = scalarText(value);
  return id === null || id === "" ? [] : [id];
}

function retrievedDocuments(
  attributes: OtlpAttributes,
  recordRole: ResourceRole,
): RankedDocument[] {
  const records = recordRole === "retrieved" || recordRole === "referenced"
    ? documentList(attributes.get("gen_ai.memory.records"))
    : [];
  const structured = [
    ...documentList(attributes.get("gen_ai.retrieval.documents")),
    ...records,
  ];
  if (structured.length > 0) return structured;
  return indexedDocuments(attributes, "retrieval.documents");
}

/** `gen_ai.retrieval.documents`: a JSON string or a structured array of `{id, score}`. */
function documentList(value: OtlpValue | undefined): RankedDocument[] {
  let items: unknown = value;
  if (typeof value === "string") {
    try {
      items = JSON.parse(value);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(items)) return [];
  return items.flatMap((item): RankedDocument[] => {
    if (typeof item === "string" || typeof item === "number") {
      const id = scalarText(item);
      return id === null ? [] : [{ id, score: null }];
    }
    if (!item || typeof item !== "object" || Array.isArray(item)) return [];
    const record = item as Record<string, unknown>;
    const id = scalarText(record.id ?? record.document_id ?? record.record_id);
    if (id === null) return [];
    return [{ id, score: finite(record.score) }];
  });
}

/** OpenInference flattened documents: `<prefix>.N.document.id` / `.score`. */
function indexedDocuments(
  attributes: OtlpAttributes,
  prefix: string,
): RankedDocument[] {
  const pattern = new RegExp(
    `^${prefix.replaceAll(".", "\\.")}\\.(\\d+)\\.document\\.(id|score)$`,
  );
  const byIndex = new Map<number, { id?: string; score: number | null }>();
  for (const [key, value] of attributes) {
    const match = pattern.exec(key);
    if (!match) continue;
    const index = Number(match[1]);
    const doc = byIndex.get(index) ?? { score: null };
    const id = match[2] === "id" ? scalarText(value) : null;
    if (id !== null) doc.id = id;
    if (match[2] === "score") doc.score = finite(value);
    byIndex.set(index, doc);
  }
  return [...byIndex.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, doc]) =>
      doc.id === undefined ? [] : [{ id: doc.id, score: doc.score }]
    );
}

function finite(value: unknown): number | null {
  const number = typeof value === "string" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) ? number : null;
}

interface Rerank {
  inputs: RankedDocument[];
  outputs: RankedDocument[];
}

function rerankedDocuments(attributes: OtlpAttributes): Rerank | null {
  const inputs = indexedDocuments(attributes, "reranker.input_documents");
  const outputs = indexedDocuments(attributes, "reranker.output_documents");
  return inputs.length > 0 || outputs.length > 0 ? { inputs, outputs } : null;
}

/** Every retrieved document was kept, in the retriever's order (rank 1 first). */
function retrievalSelection(
  docs: RankedDocument[],
  type: string,
  strategy: string,
): Selection | null {
  const candidates = validCandidates(docs.map((doc, index) => ({
    ref: { type, id: doc.id, role: "retrieved" as const },
    rank: index + 1,
    score: doc.score,
    selected: true,
    reason: "provider_rank" as const,
  })));
  return selectionOf(candidates, strategy);
}

/** Reranker inputs are the candidates; those in its output are selected, at their output rank. */
function rerankSelection(rerank: Rerank, type: string): Selection | null {
  const outputs = new Map(
    rerank.outputs.map((doc, index) => [doc.id, { doc, rank: index + 1 }]),
  );
  const inputs = rerank.inputs.length > 0 ? rerank.inputs : rerank.outputs;
  const candidates = validCandidates(inputs.map((doc) => {
    const kept = outputs.get(doc.id);
    return {
      ref: { type, id: doc.id, role: "retrieved" as const },
      rank: kept?.rank ?? null,
      score: kept?.doc.score ?? doc.score,
      selected: kept !== undefined,
      reason: "provider_rank" as const,
    };
  }));
  return selectionOf(candidates, "rerank");
}

function validCandidates(
  candidates: SelectionCandidate[],
): SelectionCandidate[] {
  return candidates.filter((candidate) =>
    v.is(ResourceRefSchema, candidate.ref)
  );
}

function selectionOf(
  candidates: SelectionCandidate[],
  strategy: string,
): Selection | null {
  if (candidates.length === 0) return null;
  const kept = candidates.slice(0, LIMITS.candidates);
  const omitted = candidates.length - kept.length;
  return {
    strategy,
    candidates: kept,
    ...(omitted > 0 ? { omitted_candidates: omitted } : {}),
  };
}

/** Drops invalid and repeated references and keeps at most the model's bound. */
function boundResources(
  refs: ResourceRef[],
): { resources: ResourceRef[]; dropped: number } {
  const seen = new Set<string>();
  const resources: ResourceRef[] = [];
  let dropped = 0;
  for (const ref of refs) {
    const key = `${ref.type}\u0000${ref.id}\u0000${ref.role}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (!v.is(ResourceRefSchema, ref) || resources.length >= LIMITS.resources) {
      dropped += 1;
      continue;
    }
    resources.push(ref);
  }
  return { resources, dropped };
}

/**
 * From a validated event input to the canonical, metadata-only envelope and
 * the row values of the index. The envelope body is canonical JSON, so an
 * identical retry produces an identical fingerprint.
 *
 * @module
 */

import * as v from "valibot";
import { issueParts } from "../issues.ts";
import { sha256Hex } from "../canonical_json.ts";
import { fastValidEvent } from "./_event_fast_path.ts";
import {
  type Attributes,
  EventInputSchema,
  isWellFormed,
  LIMITS,
  type ResourceRef,
  type TraceEvent,
} from "./model.ts";

/** Version of the envelope body layout. */
export const ENVELOPE_VERSION = 1;

/** The content of an event, kept apart from its metadata. */
export interface NormalizedPreview {
  content: string;
  chars: number;
  truncated: boolean;
  sha256: string;
}

/** How an envelope body names its preview as written: size and digest. */
export interface PreviewDigest {
  chars: number;
  sha256: string;
  truncated: boolean;
}

/**
 * How an envelope body names a preview an erasure removed: its size only,
 * so nothing in the envelope or its fingerprint can be matched against a
 * guessed text.
 */
export interface ErasedPreview {
  chars: number;
  erased: true;
  truncated: boolean;
}

/** Fields a {@link TraceEvent} gains when it is read back. */
type ReadSideFields = "seq" | "ts" | "received_at" | "preview";

/** Metadata of one event with every default applied: a {@link TraceEvent} before it is stored, times in epoch ms. */
export type EventMetadata =
  & Omit<TraceEvent, ReadSideFields | "started_at" | "ended_at">
  & { started_at: number | null; ended_at: number | null };

/** A validated event ready to be written. */
export interface NormalizedEvent {
  meta: EventMetadata;
  preview: NormalizedPreview | null;
  /**
   * Canonical metadata-only envelope body (the preview appears as its size
   * and digest only; an erasure replaces that with {@link ErasedPreview}).
   */
  body: string;
  /** SHA-256 of `body`: what "the same payload" means for a retry. */
  fingerprint: string;
  /**
   * Set when the event named a parent but no root: its root is its own id
   * until the write files it under its parent's (`ingest/_roots.ts`).
   */
  rootFromParent?: true;
}

/** One refused item of a batch. */
export interface EventIssue {
  /** Position in the batch (0-based). */
  index: number;
  /** Source line (1-based) when the batch came from NDJSON. */
  line?: number;
  /** Dotted field path, or `(root)` for the item as a whole. */
  field: string;
  message: string;
}

/** One-line form of an issue: `line 3: kind: message`, or `item 2: must be a JSON object`. */
export function describeEventIssue(issue: EventIssue): string {
  const where = issue.line === undefined
    ? `item ${issue.index}`
    : `line ${issue.line}`;
  const field = issue.field === "(root)" ? "" : `${issue.field}: `;
  return `${where}: ${field}${issue.message}`;
}

/** Options for {@link normalizeEvent}. */
export interface NormalizeOptions {
  /**
   * Validate with `EventInputSchema` alone, skipping the hand-written fast
   * path (which accepts exactly what the schema accepts; tests compare them).
   */
  schemaOnly?: boolean;
}

/** Validates and normalizes one input; returns the issue instead when it is refused. */
export function normalizeEvent(
  input: unknown,
  index: number,
  options: NormalizeOptions = {},
): NormalizedEvent | EventIssue {
  // valibot accepts arrays as objects; an array here is never an event.
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    return { index, field: "(root)", message: "must be a JSON object" };
  }
  const fast = options.schemaOnly ? null : fastValidEvent(input);
  if (fast) return fromValid(fast);
  const screened = screenValue(input, []);
  if (screened) return { index, ...screened };
  const parsed = v.safeParse(EventInputSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    return issue
      ? { index, ...issueParts(issue) }
      : { index, field: "(root)", message: "invalid event" };
  }
  return fromValid(parsed.output);
}

/** Deepest level {@link screenValue} descends to; events are four levels deep. */
const SCREEN_DEPTH = 8;

/**
 * Finds what no schema check can see: a `__proto__` key (valibot's records
 * skip it silently) and strings or keys that are not well-formed Unicode
 * (storage would turn a lone surrogate into U+FFFD, so two ids could become
 * one). Returns the first such field, or `null`.
 */
function screenValue(
  value: unknown,
  path: string[],
): { field: string; message: string } | null {
  const field = () => path.length > 0 ? path.join(".") : "(root)";
  if (typeof value === "string") {
    return isWellFormed(value) ? null : {
      field: field(),
      message: "must be well-formed Unicode (it holds a lone surrogate)",
    };
  }
  if (value === null || typeof value !== "object") return null;
  if (path.length >= SCREEN_DEPTH) return null;
  for (const [key, item] of Object.entries(value)) {
    if (key === "__proto__" || !isWellFormed(key)) {
      return {
        field: field(),
        message: key === "__proto__"
          ? 'holds the key "__proto__", which is never accepted'
          : "holds a key that is not well-formed Unicode",
      };
    }
    const found = screenValue(item, [...path, key]);
    if (found) return found;
  }
  return null;
}

function fromValid(
  input: v.InferOutput<typeof EventInputSchema>,
): NormalizedEvent {
  const meta: EventMetadata = {
    event_id: input.event_id,
    application_id: input.application_id,
    user_id: input.user_id ?? null,
    agent_id: input.agent_id ?? null,
    memory_id: input.memory_id ?? null,
    thread_id: input.thread_id ?? null,
    root_trace_id: input.root_trace_id ?? input.event_id,
    turn_id: input.turn_id ?? null,
    run_id: input.run_id ?? null,
    parent_event_id: input.parent_event_id ?? null,
    kind: input.kind,
    stage: input.stage ?? input.kind,
    coverage_profile: input.coverage_profile ?? null,
    status: input.status ?? "unset",
    tool: input.tool ?? null,
    success: input.success ?? null,
    store: input.store ?? "trace",
    started_at: input.started_at ? Date.parse(input.started_at) : null,
    ended_at: input.ended_at ? Date.parse(input.ended_at) : null,
    resources: input.resources ?? [],
    attributes: input.attributes ?? {},
    selection: input.selection ?? null,
    outcome: input.outcome ?? null,
  };
  const preview = input.preview ? normalizePreview(input.preview) : null;
  const event = envelopeOf(meta, preview, {
    started_at: canonicalIso(input.started_at, meta.started_at),
    ended_at: canonicalIso(input.ended_at, meta.ended_at),
  });
  if (!input.root_trace_id && input.parent_event_id) {
    event.rootFromParent = true;
  }
  return event;
}

/** The event of `meta` and `preview`, with its envelope body and fingerprint. */
function envelopeOf(
  meta: EventMetadata,
  preview: NormalizedPreview | null,
  times: { started_at: string | null; ended_at: string | null },
): NormalizedEvent {
  const body = envelopeBody(
    meta,
    preview && {
      chars: preview.chars,
      sha256: preview.sha256,
      truncated: preview.truncated,
    },
    times,
  );
  return { meta, preview, body, fingerprint: sha256Hex(body) };
}

/**
 * `event` filed under the task scope `root`: a child that named no root
 * takes its parent's when it is written, and its envelope and fingerprint
 * say so, as they would had it named that root itself.
 */
export function withRootTraceId(
  event: NormalizedEvent,
  root: string,
): NormalizedEvent {
  const meta = { ...event.meta, root_trace_id: root };
  // Validated times in `toISOString()` form, as `fromValid` wrote them.
  const rooted = envelopeOf(meta, event.preview, {
    started_at: isoOrNull(meta.started_at),
    ended_at: isoOrNull(meta.ended_at),
  });
  if (event.rootFromParent) rooted.rootFromParent = true;
  return rooted;
}

/** `toISOString()` form: what a time in that form already is, so it is kept as sent. */
const CANONICAL_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The canonical ISO form of a validated time (epoch `ms`), reusing `text` when it is that form already. */
function canonicalIso(
  text: string | null | undefined,
  ms: number | null,
): string | null {
  if (ms === null) return null;
  return text && CANONICAL_ISO.test(text) ? text : new Date(ms).toISOString();
}

/** Caps content at 16,000 characters (code points are not split). */
export function normalizePreview(text: string): NormalizedPreview {
  const truncated = text.length > LIMITS.previewChars;
  let content = truncated ? text.slice(0, LIMITS.previewChars) : text;
  // Drop a dangling high surrogate so the stored text stays valid UTF-16.
  if (truncated && /[\ud800-\udbff]$/.test(content)) {
    content = content.slice(0, -1);
  }
  return {
    content,
    chars: content.length,
    truncated,
    sha256: sha256Hex(content),
  };
}

/**
 * Canonical JSON of the envelope. Objects are built with their keys already in
 * sorted order, so plain `JSON.stringify` yields the same text as
 * `canonicalJson` at a fraction of the cost (ingest hashes every event).
 */
function envelopeBody(
  meta: EventMetadata,
  preview: PreviewDigest | ErasedPreview | null,
  times: { started_at: string | null; ended_at: string | null },
): string {
  const m = meta;
  return JSON.stringify({
    event: {
      agent_id: m.agent_id,
      application_id: m.application_id,
      attributes: sortedAttributes(m.attributes),
      coverage_profile: m.coverage_profile,
      ended_at: times.ended_at,
      event_id: m.event_id,
      kind: m.kind,
      memory_id: m.memory_id,
      outcome: m.outcome && {
        artifact: m.outcome.artifact && sortedRef(m.outcome.artifact),
        code: m.outcome.code,
        status: m.outcome.status,
        verified: m.outcome.verified,
      },
      parent_event_id: m.parent_event_id,
      preview,
      resources: m.resources.map(sortedRef),
      root_trace_id: m.root_trace_id,
      run_id: m.run_id,
      selection: m.selection && {
        candidates: m.selection.candidates.map((c) => ({
          rank: c.rank,
          reason: c.reason,
          ref: sortedRef(c.ref),
          score: c.score,
          selected: c.selected,
        })),
        omitted_candidates: m.selection.omitted_candidates,
        strategy: m.selection.strategy,
      },
      stage: m.stage,
      started_at: times.started_at,
      status: m.status,
      store: m.store,
      success: m.success,
      thread_id: m.thread_id,
      tool: m.tool,
      turn_id: m.turn_id,
      user_id: m.user_id,
    },
    v: ENVELOPE_VERSION,
  });
}

function sortedRef(ref: ResourceRef): ResourceRef {
  return { id: ref.id, role: ref.role, type: ref.type, version: ref.version };
}

function sortedAttributes(attributes: Attributes): Attributes {
  const keys = Object.keys(attributes);
  if (keys.length < 2) return attributes;
  const sorted: Attributes = {};
  for (const key of keys.sort()) sorted[key] = attributes[key]!;
  return sorted;
}

/**
 * `body` with its preview digest replaced by {@link ErasedPreview} (size
 * only), or `null` when it names no preview digest (none was sent, it was
 * erased already, or the body is not an envelope). Keys keep their order, so
 * a canonical body stays canonical.
 */
export function redactEnvelopeBody(body: string): string | null {
  let parsed: { event?: { preview?: unknown } } | null;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const preview = parsed?.event?.preview as Partial<PreviewDigest> | null;
  if (
    !preview || typeof preview !== "object" ||
    typeof preview.sha256 !== "string"
  ) {
    return null;
  }
  const erased: ErasedPreview = {
    chars: Number(preview.chars),
    erased: true,
    truncated: preview.truncated === true,
  };
  parsed!.event!.preview = erased;
  return JSON.stringify(parsed);
}

/**
 * The fingerprint `event`'s envelope has once an erasure removed its
 * preview, or `null` when it has no preview. A resend of an erased event is
 * recognised by it: it names the preview's size, never its text.
 */
export function erasedFingerprint(event: NormalizedEvent): string | null {
  if (!event.preview) return null;
  const redacted = redactEnvelopeBody(event.body);
  return redacted === null ? null : sha256Hex(redacted);
}

/**
 * The envelope body of an event whose preview was erased, rebuilt from its
 * metadata (an index row whose envelope source expiry removed): the same
 * text {@link redactEnvelopeBody} makes of the original envelope.
 */
export function erasedEnvelopeBody(
  meta: EventMetadata,
  preview: { chars: number; truncated: boolean },
): string {
  return envelopeBody(
    meta,
    { chars: preview.chars, erased: true, truncated: preview.truncated },
    {
      started_at: isoOrNull(meta.started_at),
      ended_at: isoOrNull(meta.ended_at),
    },
  );
}

/** Epoch ms as an ISO string, or `null`. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** Rebuilds index metadata from an envelope body (for backfill and parity). */
export function metadataFromEnvelope(body: string): EventMetadata {
  const parsed = JSON.parse(body) as {
    v: number;
    event: Record<string, unknown>;
  };
  if (
    parsed.v !== ENVELOPE_VERSION || typeof parsed.event !== "object" ||
    !parsed.event
  ) {
    throw new SyntaxError(`unsupported envelope version ${String(parsed.v)}`);
  }
  const { preview: _preview, started_at, ended_at, ...rest } = parsed.event;
  return {
    ...(rest as unknown as EventMetadata),
    started_at: typeof started_at === "string" ? Date.parse(started_at) : null,
    ended_at: typeof ended_at === "string" ? Date.parse(ended_at) : null,
  };
}

/**
 * Demo tracing: the demo's memory pipeline reports what it did (ingest, query
 * with its selection decision, delete) as content-free records; this module
 * turns them into observability events and ships them in batches, either into
 * a local index (in-process) or to a Trace server's `POST /api/events`. A stale-cache
 * FAIL can then be traced to the cache entry that served the marker.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { errorMessage } from "../errors.ts";
import { ingestEvents } from "../obs/ingest/mod.ts";
import type {
  EventInput,
  ResourceRef,
  SelectionCandidate,
} from "../obs/mod.ts";
import type { MemoryActivity } from "../memory/mod.ts";

/** One thing the demo's memory pipeline did, without any document or query text. */
export type DemoTraceRecord = MemoryActivity;

/** Identity the demo's events are filed under. */
export interface DemoTraceIdentity {
  /** Default `trace-demo`. */
  applicationId?: string;
  /** Default `demo-staging`. */
  agentId?: string;
  /** Prefix of event ids; random by default so restarts never reuse an id. */
  instanceId?: string;
}

const MAX_REFS = 64;
// Control characters make an id unusable in the index; such ids are left out.
// deno-lint-ignore no-control-regex
const OPAQUE = /^[^\u0000-\u001f\u007f]{1,256}$/;

function opaque(id: string): string | null {
  return OPAQUE.test(id) ? id : null;
}

function ref(type: string, id: string, role: ResourceRef["role"]) {
  const safe = opaque(id);
  return safe === null ? [] : [{ type, id: safe, role } as ResourceRef];
}

/** Converts one record into an observability event (`seq` makes its id unique). */
export function demoTraceEvent(
  record: DemoTraceRecord,
  seq: number,
  identity: Required<DemoTraceIdentity>,
): EventInput {
  const base = {
    event_id: `${identity.instanceId}-${seq}`,
    application_id: identity.applicationId,
    agent_id: identity.agentId,
    thread_id: opaque(record.namespace),
    store: "trace" as const,
    status: "ok" as const,
    success: true,
    started_at: new Date(record.at).toISOString(),
  };
  switch (record.type) {
    case "ingest":
      return {
        ...base,
        kind: "memory_write",
        resources: ref("document", record.id, "written"),
      };
    case "delete":
      return {
        ...base,
        kind: "memory_delete",
        resources: [
          ...record.cacheEntries.flatMap((id) =>
            ref("cache_entry", id, "deleted")
          ),
          ...record.ids.flatMap((id) => ref("document", id, "deleted")),
        ].slice(0, MAX_REFS),
        attributes: {
          "app.ids": record.ids.length,
          "app.namespaces": record.namespaces.length,
          "app.cache_entries_dropped": record.cacheEntries.length,
        },
      };
    case "query":
      return queryEvent(record, base);
  }
}

function queryEvent(
  record: Extract<DemoTraceRecord, { type: "query" }>,
  base: Omit<EventInput, "kind">,
): EventInput {
  const candidates: SelectionCandidate[] = record.cached
    ? ref("cache_entry", record.cacheEntryId ?? "", "supplied").map((r) => ({
      ref: r,
      rank: 0,
      selected: true,
      reason: "application_policy" as const,
    }))
    : record.candidates.flatMap((c) =>
      ref("vector", c.id, "retrieved").map((r) => ({
        ref: r,
        rank: c.rank,
        score: Number.isFinite(c.score) ? c.score : null,
        selected: c.selected,
        // An orphan vector was dropped because its source is gone.
        reason: c.selected
          ? "provider_rank" as const
          : "stale_version" as const,
      }))
    );
  const cacheRole = record.cached ? "supplied" : "written";
  return {
    ...base,
    kind: "selection",
    selection: candidates.length > 0
      ? {
        strategy: record.cached ? "answer_cache" : "vector_top_k",
        candidates: candidates.slice(0, MAX_REFS),
      }
      : null,
    resources: [
      ...(record.cacheEntryId === null
        ? []
        : ref("cache_entry", record.cacheEntryId, cacheRole)),
      ...record.docIds.flatMap((id) => ref("document", id, "output_bound")),
    ].slice(0, MAX_REFS),
    attributes: {
      "app.cached": record.cached,
      "app.candidates": candidates.length,
      "app.documents": record.docIds.length,
    },
  };
}

/** Writes one batch of events somewhere; throws when the batch was not stored. */
export type EventWriter = (events: EventInput[]) => Promise<void>;

/** Buffers demo records as events and writes them in batches. */
export interface DemoTraceSink {
  /** Pass as the pipeline's `onActivity`. */
  record(record: DemoTraceRecord): void;
  /** Writes buffered events; a failed batch is counted and dropped, never retried forever. */
  flush(): Promise<void>;
  /** Batches that could not be written so far. */
  readonly failures: number;
}

/** Options for {@link createDemoTraceSink}. */
export interface DemoTraceSinkOptions extends DemoTraceIdentity {
  /**
   * Receives a one-line message when writing starts failing, or fails for
   * another reason, and when it works again (with what was dropped
   * meanwhile): a server that is down costs two lines, not one per request.
   */
  onError?: (message: string) => void;
}

/** A sink that converts records and hands them to `write` on {@link DemoTraceSink.flush}. */
export function createDemoTraceSink(
  write: EventWriter,
  options: DemoTraceSinkOptions = {},
): DemoTraceSink {
  const identity: Required<DemoTraceIdentity> = {
    applicationId: options.applicationId ?? "trace-demo",
    agentId: options.agentId ?? "demo-staging",
    instanceId: options.instanceId ??
      `demo-${crypto.randomUUID().slice(0, 8)}`,
  };
  let buffer: EventInput[] = [];
  let seq = 0;
  let failures = 0;
  const outage = { reason: null as string | null, events: 0, batches: 0 };
  let chain = Promise.resolve();
  const failed = (batch: EventInput[], error: unknown) => {
    failures++;
    const reason = errorMessage(error);
    if (reason !== outage.reason) {
      options.onError?.(
        `Cannot write ${batch.length} demo trace event(s): ${reason}; later batches failing alike are counted, not printed`,
      );
    }
    outage.reason = reason;
    outage.events += batch.length;
    outage.batches++;
  };
  const recovered = () => {
    if (outage.reason === null) return;
    options.onError?.(
      `Demo trace events are written again; ${outage.events} event(s) in ${outage.batches} batch(es) were dropped meanwhile`,
    );
    Object.assign(outage, { reason: null, events: 0, batches: 0 });
  };
  return {
    record(record) {
      buffer.push(demoTraceEvent(record, ++seq, identity));
    },
    flush() {
      // Batches go out one at a time, in order.
      chain = chain.then(async () => {
        if (buffer.length === 0) return;
        const batch = buffer;
        buffer = [];
        try {
          await write(batch);
          recovered();
        } catch (error) {
          failed(batch, error);
        }
      });
      return chain;
    },
    get failures() {
      return failures;
    },
  };
}

/** The `/api/events` endpoint of a server given by its base URL or by the endpoint itself. */
export function eventsEndpoint(serverUrl: string): URL {
  const url = new URL(serverUrl);
  const path = url.pathname.replace(/\/+$/, "");
  if (path.endsWith("/api/events")) return url;
  // The API's own prefix given as the server: its events endpoint, not /api/api/events.
  if (path.endsWith("/api")) return new URL(`${path}/events`, url);
  return new URL(
    "api/events",
    url.href.endsWith("/") ? url.href : `${url.href}/`,
  );
}

/** Writes batches into a local observability index (already provisioned). */
export function dbEventWriter(db: TraceDb): EventWriter {
  return async (events) => {
    await ingestEvents(db, events, { source: "recorder" });
  };
}

/**
 * Posts batches as a JSON array to a Trace server's `POST /api/events`.
 * `serverUrl` is the server's base URL or the endpoint itself.
 */
export function httpEventWriter(
  serverUrl: string,
  options: { headers?: Record<string, string> } = {},
): EventWriter {
  const url = eventsEndpoint(serverUrl);
  return async (events) => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...options.headers },
        body: JSON.stringify(events),
        redirect: "error",
      });
    } catch (error) {
      throw new Error(`POST ${url.href} failed: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    await response.body?.cancel();
    if (!response.ok) {
      throw new Error(`POST ${url.href} answered HTTP ${response.status}`);
    }
  };
}

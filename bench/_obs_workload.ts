/**
 * The synthetic workload of the index benchmarks: bundles of one root event
 * and 499 children (500 events), as an agent turn with its retrievals,
 * selections and calls would produce them.
 *
 * @module
 */

/** Events per bundle. */
export const BUNDLE = 500;
/** The tenant every bundle belongs to. */
export const APP = "bench-app";
/** Event time of the first event; each next one is 10 ms later. */
export const BASE_TS = Date.parse("2026-09-01T00:00:00Z");
const KINDS = [
  "retrieval",
  "selection",
  "memory_search",
  "llm_call",
  "tool_call",
] as const;

/**
 * Events of bundle `b`: a root followed by its children, in time order.
 * `prefix` makes the ids of one writer distinct from another's.
 */
export function bundle(b: number, prefix = ""): Record<string, unknown>[] {
  const root = `${prefix}b${b}-root`;
  const events: Record<string, unknown>[] = [];
  for (let i = 0; i < BUNDLE; i++) {
    const at = BASE_TS + (b * BUNDLE + i) * 10;
    events.push({
      event_id: i === 0 ? root : `${prefix}b${b}-c${i}`,
      application_id: APP,
      user_id: `user-${b % 16}`,
      agent_id: `agent-${b % 8}`,
      thread_id: `thread-${b % 64}`,
      root_trace_id: root,
      parent_event_id: i === 0 ? null : root,
      kind: i === 0 ? "intent" : KINDS[i % KINDS.length],
      status: i % 97 === 0 ? "error" : "ok",
      started_at: new Date(at).toISOString(),
      ended_at: new Date(at + 5).toISOString(),
      resources: [{
        type: "doc",
        id: `doc-${(b * 7 + i) % 5000}`,
        role: "retrieved",
      }],
      attributes: { "gen_ai.operation.name": "search_memory" },
    });
  }
  return events;
}

/**
 * A root's events as a waterfall: one row per event in its parent's
 * subtree, indented by depth, with a bar on a shared time axis and the
 * duration right-aligned. Rows with children are native disclosures, so
 * subtrees collapse without JavaScript; the event id selects the event,
 * whose full detail the page shows at its top. Bars are SVG (no inline
 * styles under the page's content security policy); an event without an
 * end time is drawn as a tick.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import type { TraceEvent } from "../../../lib/obs/mod.ts";
import { mappedFields } from "../event_fields.ts";
import { formatDuration } from "../format.ts";
import { StatusBadge } from "./badge.tsx";
import { EventFields } from "./event_fields.tsx";
import { Shown } from "./shown_text.tsx";
import { KindTag } from "./trace_bits.tsx";

/** Deepest indentation drawn (deeper rows stay at this depth). */
const MAX_DEPTH = 8;
const AXIS = 1000;

/** One event in the tree. */
export interface WaterfallNode {
  event: TraceEvent;
  start: number;
  /** End time, or `null` when none was recorded. */
  end: number | null;
  children: WaterfallNode[];
  /** The parent it names is not among the events read. */
  orphan: boolean;
}

/** The events as a forest (children by start time) with the time span. */
export function buildWaterfall(events: readonly TraceEvent[]): {
  roots: WaterfallNode[];
  t0: number;
  t1: number;
} {
  const nodes = new Map<string, WaterfallNode>();
  const list = events.map((event) => {
    const start = Date.parse(event.started_at ?? event.ts);
    const node: WaterfallNode = {
      event,
      start,
      end: event.ended_at ? Date.parse(event.ended_at) : null,
      children: [],
      orphan: false,
    };
    if (!nodes.has(event.event_id)) nodes.set(event.event_id, node);
    return node;
  });
  const roots: WaterfallNode[] = [];
  for (const node of list) {
    const parentId = node.event.parent_event_id;
    const parent = parentId === null ? undefined : nodes.get(parentId);
    if (parent && parent !== node && !descends(parent, node, nodes)) {
      parent.children.push(node);
    } else {
      node.orphan = parentId !== null;
      roots.push(node);
    }
  }
  const byStart = (a: WaterfallNode, b: WaterfallNode) =>
    a.start - b.start || a.event.seq - b.event.seq;
  roots.sort(byStart);
  for (const node of list) node.children.sort(byStart);
  const t0 = Math.min(...list.map((n) => n.start));
  const t1 = Math.max(...list.map((n) => n.end ?? n.start));
  return { roots, t0, t1 };
}

/** Whether `ancestor` sits below `node` already (a parent cycle in the data). */
function descends(
  ancestor: WaterfallNode,
  node: WaterfallNode,
  nodes: Map<string, WaterfallNode>,
): boolean {
  let cursor: WaterfallNode | undefined = ancestor;
  for (let hops = 0; cursor && hops < 1_000; hops++) {
    if (cursor === node) return true;
    const up: string | null = cursor.event.parent_event_id;
    cursor = up === null ? undefined : nodes.get(up);
  }
  return false;
}

/** Props of {@link Waterfall}. */
export interface WaterfallProps {
  events: readonly TraceEvent[];
  /** Draw the parent tree (false: one flat row per event, e.g. when filtered). */
  tree: boolean;
  selected: string | undefined;
  /** The link that selects an event. */
  selectHref: (eventId: string) => string;
  /** User and thread the whole root shares (named once by the page, left off the rows). */
  shared?: { user: boolean; thread: boolean };
  /** The link to an event's reveal control, for events that hold a content preview. */
  revealHref?: (eventId: string) => string;
}

/** The waterfall with its time axis. */
export const Waterfall: FC<WaterfallProps> = (props) => {
  const built = buildWaterfall(props.events);
  const roots = props.tree
    ? built.roots
    : built.roots.flatMap(flatten).map((node) => ({ ...node, children: [] }))
      .sort((a, b) => a.start - b.start || a.event.seq - b.event.seq);
  const span = Math.max(built.t1 - built.t0, 1);
  const scale = (t: number) => ((t - built.t0) / span) * AXIS;
  return (
    <div class="waterfall" id="waterfall">
      <div class="wf-head" aria-hidden="true">
        <span class="wf-head__event">Event</span>
        <span class="wf-axis">
          {[0, 1, 2, 3, 4].map((q) => (
            <span>{formatDuration((span * q) / 4)}</span>
          ))}
        </span>
        <span class="num">Took</span>
      </div>
      <ul class="wf-tree">
        {roots.map((node) => (
          <Node node={node} depth={0} scale={scale} t0={built.t0} {...props} />
        ))}
      </ul>
    </div>
  );
};

function flatten(node: WaterfallNode): WaterfallNode[] {
  return [node, ...node.children.flatMap(flatten)];
}

/** One event of the tree, placed on the time axis. */
type NodeProps = WaterfallProps & {
  node: WaterfallNode;
  depth: number;
  scale: (t: number) => number;
  t0: number;
};

const Node: FC<NodeProps> = (props) => {
  const { node, depth } = props;
  const row = <Row {...props} />;
  if (node.children.length === 0) {
    return <li class="wf-node">{row}</li>;
  }
  return (
    <li class="wf-node">
      <details open>
        {row}
        <ul class="wf-tree">
          {node.children.map((child) => (
            <Node {...props} node={child} depth={depth + 1} />
          ))}
        </ul>
      </details>
    </li>
  );
};

const Row: FC<NodeProps> = (
  { node, depth, scale, t0, selected, selectHref, shared, revealHref },
) => {
  const { event } = node;
  const chosen = event.event_id === selected;
  const took = node.end === null ? null : Math.max(0, node.end - node.start);
  const x = scale(node.start);
  const width = took === null ? 3 : Math.max(3, scale(node.end!) - x);
  const cells: Child = (
    <>
      <span class={`wf-label depth-${Math.min(depth, MAX_DEPTH)}`}>
        <StatusBadge status={event.status} />
        <KindTag kind={event.kind} />
        <a href={selectHref(event.event_id)}>
          <Shown text={event.event_id} />
        </a>
        <EventFields
          fields={mappedFields(event)}
          hideUser={shared?.user ?? false}
          hideThread={shared?.thread ?? false}
        />
        {event.preview && revealHref
          ? (
            <a class="wf-preview" href={revealHref(event.event_id)}>
              content preview
            </a>
          )
          : null}
        {node.orphan
          ? (
            <span class="meta">
              (parent <Shown text={event.parent_event_id ?? ""} /> not read)
            </span>
          )
          : null}
      </span>
      <svg
        class="wf-bar"
        viewBox={`0 0 ${AXIS} 12`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`starts at +${formatDuration(node.start - t0)}${
          took === null
            ? ", no end recorded"
            : `, takes ${formatDuration(took)}`
        }`}
      >
        <rect
          class={event.status === "error" ? "bar bar--error" : "bar"}
          x={Math.min(x, AXIS - width)}
          y={1}
          width={width}
          height={10}
        />
      </svg>
      <span class="num">{took === null ? "–" : formatDuration(took)}</span>
    </>
  );
  const className = `wf-row${chosen ? " is-selected" : ""}`;
  const current = chosen ? "true" : undefined;
  return node.children.length > 0
    ? (
      <summary class={className} aria-current={current} data-nav-item="">
        {cells}
      </summary>
    )
    : (
      <div class={className} aria-current={current} data-nav-item="">
        {cells}
      </div>
    );
};

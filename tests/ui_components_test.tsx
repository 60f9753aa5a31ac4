/** UI components and formatting: badges, times, numbers, tables, charts. */

import assert from "node:assert/strict";
import type { Child } from "hono/jsx";
import {
  StatusBadge,
  TONE_BY_STATUS,
  toneOf,
} from "../routes/ui/components/badge.tsx";
import { BarChart, TimeChart } from "../routes/ui/components/chart.tsx";
import { CopyId } from "../routes/ui/components/copy_id.tsx";
import { DataTable } from "../routes/ui/components/data_table.tsx";
import { Shown, shownString } from "../routes/ui/components/shown_text.tsx";
import { ActionForm } from "../routes/ui/components/action_form.tsx";
import { EmptyState } from "../routes/ui/components/empty_state.tsx";
import { PageHead, Section } from "../routes/ui/components/section.tsx";
import { KeyValue } from "../routes/ui/components/key_value.tsx";
import { ChipRow, KindTag } from "../routes/ui/components/trace_bits.tsx";
import { FindingsList } from "../routes/ui/components/findings_list.tsx";
import { ProblemList } from "../routes/ui/components/cleanup_panel.tsx";
import {
  RunTimeline,
  SampleTable,
} from "../routes/ui/components/run_timeline.tsx";
import { runFake } from "./_fake_target.ts";
import { sampleWords } from "../routes/ui/run_view.ts";
import type { Finding } from "../lib/runner/report.ts";
import { Time } from "../routes/ui/components/time.tsx";
import { displayParts } from "../lib/display.ts";
import { niceTicks, timeTicks } from "../routes/ui/components/_scale.ts";
import {
  formatCount,
  formatDuration,
  formatRelative,
  formatUtc,
} from "../routes/ui/format.ts";

async function html(element: Child): Promise<string> {
  return String(await element);
}

Deno.test("StatusBadge shows the status as a word, in the tone of that word", async (t) => {
  const words = {
    PASS: "success",
    FAIL: "danger",
    INCONCLUSIVE: "attention",
    RUNNING: "accent",
    INTERRUPTED: "done",
    ok: "success",
    degraded: "attention",
    failing: "danger",
    unknown: "neutral",
  };
  for (const [word, tone] of Object.entries(words)) {
    await t.step(word, async () => {
      assert.equal(
        await html(<StatusBadge status={word} />),
        `<span class="badge badge--${tone}">${word.toUpperCase()}</span>`,
      );
    });
  }
  assert.equal(toneOf("something-new"), "neutral");
  for (const word of Object.keys(TONE_BY_STATUS)) {
    assert.equal(word, word.toLowerCase(), "keys are lower case");
  }
});

Deno.test("Time shows relative time with the absolute UTC time on hover", async () => {
  const now = Date.parse("2026-11-29T10:03:00Z");
  assert.equal(
    await html(<Time iso="2026-11-29T10:00:00.000Z" now={now} />),
    '<time datetime="2026-11-29T10:00:00.000Z" title="2026-11-29 10:00:00 UTC">3 min ago</time>',
  );
  assert.match(await html(<Time iso={null} now={now} />), /never/);
});

Deno.test("formatting: counts, durations and relative times", () => {
  assert.equal(formatCount(1_234_567), "1,234,567");
  assert.equal(formatCount(null), "unknown");
  const durations: [number, string][] = [
    [0.4213, "0.42 ms"],
    [12.34, "12.3 ms"],
    [250.4, "250 ms"],
    [4210, "4.21 s"],
    [42_100, "42.1 s"],
    [192_000, "3 min 12 s"],
    [7_500_000, "2 h 5 min"],
  ];
  for (const [ms, text] of durations) assert.equal(formatDuration(ms), text);
  const now = Date.parse("2026-11-29T12:00:00Z");
  assert.equal(formatRelative("2026-11-29T11:59:58Z", now), "just now");
  assert.equal(formatRelative("2026-11-29T10:00:00Z", now), "2 h ago");
  assert.equal(formatRelative("2026-11-30T12:00:00Z", now), "in 1 d");
  assert.equal(
    formatUtc("2026-11-29T10:00:00.123Z"),
    "2026-11-29 10:00:00 UTC",
  );
});

Deno.test("CopyId renders the id in monospace with a hidden, labelled copy button", async () => {
  assert.equal(
    await html(<CopyId value="run-1" label="run id" />),
    '<span class="copy-id"><code>run-1</code><button type="button" class="copy-button" data-copy="run-1" aria-label="Copy run id run-1" hidden="">Copy</button></span>',
  );
});

Deno.test("DataTable right-aligns numeric columns and explains an empty table", async () => {
  const columns = [
    {
      header: "Name",
      rowHeader: true,
      cell: (r: { n: number }) => `row ${r.n}`,
    },
    { header: "Count", numeric: true, cell: (r: { n: number }) => r.n },
  ];
  const table = await html(
    <DataTable caption="Rows" columns={columns} rows={[{ n: 1 }]} navigable />,
  );
  assert.match(table, /<div class="table-wrap"><table\s*>/);
  assert.match(table, /<th scope="col" class="num">Count<\/th>/);
  assert.match(
    table,
    /<tr data-nav-item=""><th scope="row"\s*>row 1<\/th><td class="num">1<\/td><\/tr>/,
  );
  const empty = await html(
    <DataTable
      caption="Rows"
      columns={columns}
      rows={[]}
      empty={{ title: "Nothing yet", command: "trace run" }}
    />,
  );
  assert.doesNotMatch(empty, /<table/);
  assert.match(empty, /Nothing yet/);
  assert.match(empty, /<pre><code>trace run<\/code><\/pre>/);
});

Deno.test("niceTicks() and timeTicks() cover their range with round values", () => {
  assert.deepEqual(niceTicks(0, 2.2, 4), [0, 1, 2, 3]);
  assert.deepEqual(niceTicks(0, 0.9, 4), [0, 0.25, 0.5, 0.75, 1]);
  assert.deepEqual(niceTicks(0, 0), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  const ticks = niceTicks(0, 1_234_567, 5);
  assert.ok(ticks[ticks.length - 1]! >= 1_234_567);
  const t0 = Date.parse("2026-11-29T10:00:07Z");
  const times = timeTicks(t0, t0 + 60_000);
  assert.deepEqual(times.map((t) => t.label), [
    "10:00:10",
    "10:00:20",
    "10:00:30",
    "10:00:40",
    "10:00:50",
    "10:01:00",
  ]);
});

Deno.test("charts name their unit and series and carry a data table", async () => {
  const t0 = Date.parse("2026-11-29T10:00:00Z");
  const line = await html(
    <TimeChart
      id="c1"
      title="Store counts"
      unit="records"
      curve="step"
      markers={[{ t: t0 + 5000, label: "window end" }]}
      series={[
        {
          label: "source",
          points: [{ t: t0, v: 3 }, { t: t0 + 10_000, v: 0 }],
        },
        {
          label: "vector",
          points: [{ t: t0, v: 3 }, { t: t0 + 10_000, v: 1 }],
        },
      ]}
    />,
  );
  assert.match(
    line,
    /<figcaption id="c1-caption">Store counts \(records\)<\/figcaption>/,
  );
  assert.match(
    line,
    /role="img" aria-labelledby="c1-caption" aria-describedby="c1-table"/,
  );
  assert.match(line, />window end</);
  assert.match(line, /<th scope="col" class="num">vector \(records\)<\/th>/);
  assert.match(
    line,
    /<th scope="row">2026-11-29 10:00:10 UTC<\/th><td class="num">0<\/td><td class="num">1<\/td>/,
  );
  assert.match(line, /stroke-dasharray="6 4"/, "the second series is dashed");
  const bars = await html(
    <BarChart
      id="c2"
      title="Latency"
      unit="ms"
      categories={["query_page"]}
      series={[{ label: "p50", values: [1.5] }, {
        label: "p95",
        values: [2.25],
      }]}
      table="sr-only"
    />,
  );
  assert.match(
    bars,
    />p95 2\.25</,
    "bars are labelled, not told apart by colour",
  );
  assert.match(bars, />3 ms</, "the axis names its unit");
  assert.match(bars, /<div class="sr-only"><table id="c2-table">/);
});

Deno.test("displayParts() and Shown mark bidi, zero-width and control characters as escapes, and keep lines where asked", async () => {
  assert.deepEqual(displayParts("abc\u202Egnp.exe"), [
    { text: "abc", escaped: false },
    { text: "\\u{202e}", escaped: true },
    { text: "gnp.exe", escaped: false },
  ]);
  assert.deepEqual(displayParts("plain, with \\u{202e} typed"), [
    { text: "plain, with \\u{202e} typed", escaped: false },
  ]);
  for (
    const char of [
      "\u202A",
      "\u2066",
      "\u2069",
      "\u200E",
      "\u200F",
      "\u200B",
      "\u200D",
      "\uFEFF",
      "\u001b",
      "\u0085",
      "\u2028",
      "\n",
      "\t",
      "\ud800",
    ]
  ) {
    const parts = displayParts(`a${char}b`);
    assert.equal(parts.length, 3, JSON.stringify(char));
    assert.equal(parts[1]!.escaped, true);
  }
  assert.deepEqual(
    displayParts("one\r\ntwo\tthree\rfour\u001b", { multiline: true }),
    [
      { text: "one\r\ntwo\tthree", escaped: false },
      { text: "\\u{000d}", escaped: true },
      { text: "four", escaped: false },
      { text: "\\u{001b}", escaped: true },
    ],
  );
  assert.equal(await html(<Shown text="plain" />), "plain");
  // (JSX attribute strings keep a backslash as it is: the characters come in variables.)
  const spaced = "x\u200By";
  const id = "evt\u200B1";
  assert.equal(
    await html(<Shown text={spaced} />),
    'x<span class="esc" title="Character U+200B, shown as its code">\\u{200b}</span>y',
  );
  assert.equal(
    await html(<CopyId value={id} />),
    '<span class="copy-id"><code>evt<span class="esc" title="Character U+200B, shown as its code">\\u{200b}</span>1</code><button type="button" class="copy-button" data-copy="evt\u200B1" aria-label="Copy id evt\\u{200b}1" hidden="">Copy</button></span>',
  );
});

Deno.test("labels, tooltips, headings and empty states show bidi and zero-width characters as the body does", async () => {
  // (Escapes in variables: a JSX attribute string keeps a backslash as it is.)
  const id = "a\u202Eb\u200Bc";
  assert.equal(shownString(id), "a\\u{202e}b\\u{200b}c");
  assert.equal(shownString("C:\\dir"), "C:\\dir", "a backslash stays");
  const raw = /[\u200B\u202E]/;
  const copy = await html(<CopyId value={id} label="run id" />);
  assert.match(copy, /aria-label="Copy run id a\\u\{202e\}b\\u\{200b\}c"/);
  assert.match(copy, new RegExp(`data-copy="${id}"`), "copies the id itself");
  const run = { allowed: true, reason: null, message: null } as const;
  const refused = { allowed: false, reason: "read_only", message: `No ${id}` };
  const buttonOf = async (form: Child) => {
    const tag = /<button[^>]*>/.exec(await html(form))?.[0] ?? "";
    assert.match(tag, /title="[^"]*a\\u\{202e\}b\\u\{200b\}c"/);
    assert.doesNotMatch(tag, raw);
  };
  await buttonOf(
    <ActionForm action="/x" csrf={null} label="Go" run={run} title={id} />,
  );
  await buttonOf(
    <ActionForm action="/x" csrf={null} label="Go" run={refused} />,
  );
  const heading = await html(<Section id="s" title={`Thread ${id}`} />);
  const empty = await html(<EmptyState title={`No event "${id}" in scope`} />);
  for (const out of [heading, empty]) {
    assert.match(out, /<span class="esc"/);
    assert.doesNotMatch(out, raw);
  }
});

Deno.test("the shared components show a string they are handed as a page shows an id: intros, reasons, hints, cells, kinds, chips, badges, findings and problems", async () => {
  const id = "a\u202Eb\u200Bc";
  const finding: Finding = {
    severity: "inconclusive",
    code: "request_failed",
    subject: `store ${id}`,
    message: `the adapter answered ${id}`,
    sample_indexes: [],
  };
  const parts: Record<string, Child> = {
    section: <Section id="s" title="Selected" intro={`Event id "${id}"`} />,
    head: <PageHead title="Root" status="ok" reason={`Root ${id}`} meta={id} />,
    facts: (
      <KeyValue
        items={[{ term: `Profile ${id}`, value: id, hint: id }]}
      />
    ),
    table: (
      <DataTable
        caption={`Candidates of ${id}`}
        columns={[{ header: "Id", cell: (row: string) => row }]}
        rows={[id]}
      />
    ),
    empty: <EmptyState title="No samples">{`The baseline: ${id}`}</EmptyState>,
    kind: <KindTag kind={`llm_call${id}`} />,
    chips: (
      <ChipRow
        label="Kinds"
        chips={[{ label: id, href: "/x", current: false }]}
      />
    ),
    badge: <StatusBadge status={id} />,
    findings: <FindingsList findings={[finding]} />,
    problems: <ProblemList problems={[`control namespace ${id} left`]} />,
  };
  for (const [name, part] of Object.entries(parts)) {
    const out = await html(part);
    assert.match(out, /<span class="esc"[^>]*>\\u\{202e\}<\/span>/, name);
    assert.doesNotMatch(out, /[\u200B\u202E]/, `${name}: ${out}`);
  }
});

Deno.test("the run timeline and samples table mark a control namespace that grew after the deletion", async () => {
  const { report } = await runFake({ behaviour: { moveToControl: true } });
  const table = await html(<SampleTable report={report} />);
  const cells = [
    ...table.matchAll(/data-label="Control"[^>]*>\s*([^<]*?)\s*</g),
  ]
    .map((m) => m[1]);
  // The baseline row, then one row per sample.
  assert.deepEqual(cells, ["ok", ...report.samples.map(() => "GREW")]);
  const chart = await html(<RunTimeline report={report} />);
  assert.equal(
    chart.match(/class="flag flag--grew"/g)?.length,
    report.samples.length,
  );
  assert.match(chart, /control grew/);
});

Deno.test("a running job's last sample in words names the control's state, GREW among them", () => {
  const sample = {
    index: 2,
    started_at_seconds: 1,
    window_seconds: 3,
    inventory: {
      complete: true,
      source_records: 0,
      vector_records: 0,
      cache_records: 0,
    },
    marker_seen: false,
  };
  assert.equal(
    sampleWords({ ...sample, control: "grew" }),
    "#2 at 1.00 s of 3 s: source 0, vector 0, cache 0; marker gone; control GREW",
  );
  assert.match(sampleWords({ ...sample, control: "ok" }), /; control ok$/);
});

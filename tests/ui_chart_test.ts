import assert from "node:assert/strict";
import { TimeChart } from "../routes/ui/components/chart.tsx";

/** The x-axis labels of a rendered chart: each one's text and centre. */
function xLabels(svg: string, height: number): { x: number; text: string }[] {
  const pattern = new RegExp(
    `<text x="([\\d.]+)" y="${
      height - 10
    }" text-anchor="middle">([^<]+)</text>`,
    "g",
  );
  return [...svg.matchAll(pattern)].map((m) => ({
    x: Number(m[1]),
    text: m[2]!,
  }));
}

// The widest a character of the x axis's labels is drawn, in the chart's
// units: a phone draws the chart's text at 20 units (ui/style.css).
const PHONE_CHAR = 12;

Deno.test("TimeChart() spaces its clock labels so a phone's larger text neither overlaps nor leaves the chart", async (t) => {
  for (const seconds of [4, 10, 12, 30, 90, 600, 4 * 3600]) {
    await t.step(`${seconds} s of checks`, () => {
      const t0 = Date.UTC(2026, 11, 1, 16, 0, 16);
      const points = Array.from({ length: 7 }, (_, i) => ({
        t: t0 + (i * seconds * 1000) / 6,
        v: i,
      }));
      const svg = String(
        TimeChart({
          id: "c",
          title: "Checks",
          unit: "ms",
          series: [{ label: "p50", points }],
        }),
      );
      const labels = xLabels(svg, 220);
      assert.ok(labels.length >= 2, `${labels.length} labels`);
      for (const [i, label] of labels.entries()) {
        const half = (label.text.length * PHONE_CHAR) / 2;
        assert.ok(label.x - half >= 0 && label.x + half <= 560, label.text);
        const next = labels[i + 1];
        if (!next) continue;
        const room = next.x - label.x;
        assert.ok(
          room >= (label.text.length + next.text.length) * PHONE_CHAR / 2,
          `${label.text} and ${next.text} ${room} units apart`,
        );
      }
    });
  }
});

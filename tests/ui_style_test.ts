/** The stylesheet's rules: contrast in light and dark, five type sizes, a 4 px spacing scale. */

import assert from "node:assert/strict";
import { TONES } from "../routes/ui/components/badge.tsx";

const CSS = await Deno.readTextFile(
  new URL("../ui/style.css", import.meta.url),
);

/** Custom properties of the first `:root` block after `marker`. */
function variables(marker: string): Map<string, string> {
  const start = CSS.indexOf(":root {", CSS.indexOf(marker));
  const block = CSS.slice(start, CSS.indexOf("}", start));
  return new Map(
    [...block.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => [m[1]!, m[2]!]),
  );
}

function luminance(hex: string): number {
  const n = parseInt(hex.slice(1), 16);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

const LIGHT = variables(":root");
const DARK = variables("prefers-color-scheme: dark");

for (const [scheme, vars] of [["light", LIGHT], ["dark", DARK]] as const) {
  Deno.test(`colours pass WCAG AA contrast in ${scheme}`, () => {
    const color = (name: string) => {
      const value = vars.get(name) ?? LIGHT.get(name);
      assert.ok(value && /^#[0-9a-f]{6}$/i.test(value), `${name}: ${value}`);
      return value;
    };
    const text: [string, string][] = [
      ["--fg", "--bg"],
      ["--fg", "--bg-muted"],
      ["--fg-muted", "--bg"],
      ["--fg-muted", "--bg-muted"],
      ["--link", "--bg"],
      ...TONES.map((
        tone,
      ): [string, string] => [`--${tone}-fg`, `--${tone}-bg`]),
      ...TONES.map((tone): [string, string] => [`--${tone}-fg`, "--bg"]),
    ];
    for (const [fg, bg] of text) {
      const ratio = contrast(color(fg), color(bg));
      assert.ok(ratio >= 4.5, `${fg} on ${bg}: ${ratio.toFixed(2)}`);
    }
    // Focus rings and chart lines are not text: 3:1 against the page.
    for (const name of ["--focus", "--chart-1", "--chart-2", "--chart-3"]) {
      const ratio = contrast(color(name), color("--bg"));
      assert.ok(ratio >= 3, `${name} on --bg: ${ratio.toFixed(2)}`);
    }
  });
}

/** CIE L*a*b* of a `#rrggbb` colour (D65). */
function lab(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const f = (t: number) => t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116;
  const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047);
  const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

/** Colour difference ΔE*76: under about 10, two colours read as one. */
function difference(a: string, b: string): number {
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

for (const [scheme, vars] of [["light", LIGHT], ["dark", DARK]] as const) {
  Deno.test(`chart series read apart from each other and from the ok and failure colours in ${scheme}`, () => {
    const color = (name: string) => vars.get(name) ?? LIGHT.get(name)!;
    const series = ["--chart-1", "--chart-2", "--chart-3"];
    // The run timeline draws the stores' series beside "control ok"
    // (--success-fg) and "marker seen" / "control lost" (--danger-fg).
    const others = [...series, "--success-fg", "--danger-fg"];
    for (const a of series) {
      for (const b of others) {
        if (a === b) continue;
        const delta = difference(color(a), color(b));
        assert.ok(
          delta >= 30,
          `${a} ${color(a)} and ${b} ${color(b)}: ΔE ${delta.toFixed(0)}`,
        );
      }
    }
  });
}

Deno.test("the primary button's text passes contrast", () => {
  assert.ok(contrast("#ffffff", "#1f6feb") >= 4.5);
  assert.ok(
    CSS.includes(
      ".button--primary {\n  color: #ffffff;\n  background: #1f6feb;",
    ),
    "the checked colours are the ones the stylesheet uses",
  );
});

Deno.test("the stylesheet uses at most five type sizes and a 4 px spacing scale", () => {
  const sizes = [...LIGHT.keys()].filter((name) => name.startsWith("--text-"));
  assert.ok(sizes.length <= 5, sizes.join(", "));
  for (const match of CSS.matchAll(/font-size:\s*([^;]+);/g)) {
    // SVG text is sized in the chart's own units and scales with it (the
    // run timeline draws it larger on a phone, where it is scaled down).
    if (["13px", "20px", "26px"].includes(match[1]!)) continue;
    assert.match(match[1]!, /^var\(--text-(xs|sm|md|lg|xl)\)$/, match[0]);
  }
  for (const [name, value] of LIGHT) {
    if (!name.startsWith("--space-")) continue;
    assert.equal(parseInt(value) % 4, 0, `${name}: ${value}`);
  }
  for (
    const match of CSS.matchAll(/(?:padding|margin|gap)[\w-]*:\s*([^;]+);/g)
  ) {
    for (const px of match[1]!.matchAll(/(\d+)px/g)) {
      // 1 px is a hairline (the visually-hidden pattern), not spacing.
      if (Number(px[1]) > 1) assert.equal(Number(px[1]) % 4, 0, match[0]);
    }
  }
});

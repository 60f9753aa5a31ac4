/** docs/observability.md lists every row of the convention tables the receiver uses. */

import assert from "node:assert/strict";
import {
  CONVENTIONS,
  MAPPED_FIELDS,
  NORMALIZED_ATTRIBUTES,
} from "../lib/obs/otlp/mod.ts";

const docs = await Deno.readTextFile(
  new URL("../docs/observability.md", import.meta.url),
);

/** The lines of one `###` part of the OTLP conventions section. */
function part(title: string): string[] {
  const section = docs.slice(docs.indexOf("## OTLP conventions"));
  const start = section.indexOf(`### ${title}`);
  assert.ok(start >= 0, `no "${title}" part in the OTLP conventions section`);
  const rest = section.slice(start + 4);
  const end = rest.search(/\n##/);
  return (end < 0 ? rest : rest.slice(0, end)).split("\n");
}

/** The table row whose first cell is `first`. */
function row(lines: string[], first: string): string {
  const found = lines.find((line) => line.startsWith(`| ${first} `));
  assert.ok(found, `no row for ${first}`);
  return found;
}

const FIELD_CELLS: Record<string, string> = {
  agent: "`agent_id`",
  memory: "`memory_id`",
  thread: "`thread_id`",
  user: "`user_id`",
  tool: "`tool`",
};

Deno.test("the docs list every kind each convention maps", () => {
  const lines = part("Kinds");
  for (const convention of CONVENTIONS) {
    for (const [value, kind] of Object.entries(convention.kind.kinds)) {
      assert.ok(
        row(lines, `\`${kind}\``).includes(`\`${value}\``),
        `${convention.name} ${value} → ${kind} is not in the docs`,
      );
    }
  }
});

Deno.test("the docs list every attribute each convention reads for a field", () => {
  const lines = part("Fields");
  const normalized: Record<string, string> = NORMALIZED_ATTRIBUTES;
  for (const field of MAPPED_FIELDS) {
    if (field === "tenant") continue; // The tenant has a part of its own.
    const cell = FIELD_CELLS[field] ?? `\`${normalized[field]}\``;
    const line = row(lines, cell);
    for (const convention of CONVENTIONS) {
      for (const key of convention.fields[field] ?? []) {
        assert.ok(line.includes(`\`${key}\``), `${key} (${field}) missing`);
      }
    }
  }
  const tenant = part("Tenant").join("\n");
  for (const convention of CONVENTIONS) {
    for (const key of convention.fields.tenant ?? []) {
      const name = key.split(".").at(-1)!;
      assert.ok(tenant.includes(name), `tenant attribute ${key} missing`);
    }
  }
});

Deno.test("the docs list every content attribute", () => {
  const content = part("Content").join("\n");
  for (const convention of CONVENTIONS) {
    for (const key of convention.content) {
      // The deprecated gen_ai.prompt / gen_ai.completion are listed with their indexed forms.
      const shown = content.includes(`\`${key}\``) ||
        content.includes(`\`${key}*\``);
      assert.ok(shown, `content attribute ${key} missing`);
    }
  }
});

/**
 * The indexes and triggers the observability schema declares, derived from
 * its migrations alone, so health can tell a file whose indexes are missing
 * (slow queries, unguarded envelopes) from one that is ready.
 *
 * @module
 */

import type { Migration } from "../db.ts";
import { OBS_MIGRATIONS } from "./schema.ts";

/**
 * Every index and trigger the schema declares, by name, replaying the
 * migrations in order: a later step may drop an index or trigger, drop or
 * rename its table (a re-keyed table is rebuilt that way), or create it anew.
 */
export function expectedSchemaObjects(
  migrations: readonly Migration[] = OBS_MIGRATIONS,
): string[] {
  // Object name -> the table it belongs to.
  const objects = new Map<string, string>();
  const steps = [...migrations].sort((a, b) => a.version - b.version);
  for (const statement of steps.flatMap((m) => m.statements)) {
    applySchemaStatement(objects, statement);
  }
  return [...objects.keys()].sort();
}

const NAME = String.raw`["\x60\[]?(\w+)["\x60\]]?`;
const CREATE_OBJECT = new RegExp(
  String
    .raw`^\s*CREATE\s+(?:UNIQUE\s+)?(?:INDEX|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}[\s\S]*?\sON\s+${NAME}`,
  "i",
);
const DROP_OBJECT = new RegExp(
  String.raw`^\s*DROP\s+(?:INDEX|TRIGGER)\s+(?:IF\s+EXISTS\s+)?${NAME}`,
  "i",
);
const DROP_TABLE = new RegExp(
  String.raw`^\s*DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?${NAME}`,
  "i",
);
const RENAME_TABLE = new RegExp(
  String.raw`^\s*ALTER\s+TABLE\s+${NAME}\s+RENAME\s+TO\s+${NAME}`,
  "i",
);

function applySchemaStatement(
  objects: Map<string, string>,
  statement: string,
): void {
  let match = CREATE_OBJECT.exec(statement);
  if (match) {
    objects.set(match[1]!, match[2]!);
    return;
  }
  match = DROP_OBJECT.exec(statement);
  if (match) {
    objects.delete(match[1]!);
    return;
  }
  match = DROP_TABLE.exec(statement);
  if (match) {
    // Dropping a table drops its indexes and triggers with it.
    for (const [name, table] of objects) {
      if (table === match[1]) objects.delete(name);
    }
    return;
  }
  match = RENAME_TABLE.exec(statement);
  if (match) {
    for (const [name, table] of objects) {
      if (table === match[1]) objects.set(name, match[2]!);
    }
  }
}

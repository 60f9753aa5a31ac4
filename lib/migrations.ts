/** Every component's migrations, applied together by commands that write. */

import { AUTH_MIGRATIONS } from "./auth/schema.ts";
import type { Migration } from "./db.ts";
import { LEDGER_MIGRATIONS } from "./ledger/schema.ts";
import { OBS_MIGRATIONS } from "./obs/mod.ts";

/** All migrations known to this build. */
export const ALL_MIGRATIONS: readonly Migration[] = [
  ...LEDGER_MIGRATIONS,
  ...OBS_MIGRATIONS,
  ...AUTH_MIGRATIONS,
];

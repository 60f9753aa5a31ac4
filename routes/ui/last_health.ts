/**
 * The latest index health this server computed, for pages that show it in
 * one line (the overview) without paying for a full health check on every
 * visit: at a million events the check takes seconds.
 *
 * @module
 */

import type { ObsHealth } from "../../lib/obs/maint/mod.ts";
import type { PageSpec } from "./page.ts";

/** The last health report of this server, and when it was made. */
export class LastHealth {
  #latest: ObsHealth | null = null;

  /** The latest report, or `null` before the first check. */
  get latest(): ObsHealth | null {
    return this.#latest;
  }

  /** The same page, remembering every report it loads. */
  watch<T extends ObsHealth>(spec: PageSpec<T>): PageSpec<T> {
    return {
      ...spec,
      load: async (c, params) => {
        const data = await spec.load(c, params);
        this.#latest = data;
        return data;
      },
    };
  }
}

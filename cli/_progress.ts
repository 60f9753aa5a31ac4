/** Progress on stderr: one live line on a terminal, nothing otherwise. */

import type { RunEvent } from "../lib/runner/events.ts";
import type { CliIo } from "./_io.ts";

/** Returns a run-event listener that renders progress for `io`. */
export function progressRenderer(io: CliIo): (event: RunEvent) => void {
  if (!io.stderrIsTerminal) return () => {};
  const line = (text: string) => io.err(`\r\x1b[2K${text}`);
  return (event) => {
    switch (event.type) {
      case "phase":
        if (event.phase === "done") io.err("\r\x1b[2K");
        else line(`${event.phase}…`);
        break;
      case "sample": {
        const s = event.sample;
        const inv = s.inventory;
        const counts = inv
          ? `source ${inv.source_records} vector ${inv.vector_records} cache ${inv.cache_records}`
          : "inventory failed";
        const bar = progressBar(s.started_at_seconds / event.window_seconds);
        line(
          `window ${bar} sample #${s.index} at ${
            s.started_at_seconds.toFixed(2)
          } s: ${counts}, marker ${markerLabel(s.marker_seen)}`,
        );
        break;
      }
      case "cleanup":
        line(
          `cleanup ${
            event.cleanup.cleanup_complete ? "complete" : "incomplete"
          }`,
        );
        break;
    }
  };
}

function progressBar(fraction: number): string {
  const width = 20;
  const filled = Math.max(0, Math.min(width, Math.round(fraction * width)));
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
}

/** Human label of a marker flag. */
export function markerLabel(seen: boolean | null): string {
  return seen === null ? "unknown" : seen ? "SEEN" : "gone";
}

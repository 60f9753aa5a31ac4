/**
 * Progress on stderr: one live line on a terminal; plain lines elsewhere (CI
 * logs), one per phase, per sample and per cleanup poll, so a long window is
 * never silent.
 *
 * @module
 */

import {
  interruptedRunMaxSeconds,
  type RunEvent,
} from "../lib/runner/events.ts";
import type { MarkerForm } from "../lib/runner/report.ts";
import { controlWord } from "../lib/runner/control_state.ts";
import type { CleanupPoll } from "../lib/runs/mod.ts";
import type { CliIo } from "./_io.ts";

type SampleEvent = Extract<RunEvent, { type: "sample" }>;

/** Writes `text` as a line of its own on stderr, first clearing a live progress line on a terminal. */
export function progressNote(io: CliIo, text: string): void {
  io.err(`${io.stderrIsTerminal ? "\r\x1b[2K" : ""}${text}\n`);
}

/** Returns a run-event listener that renders progress for `io`. */
export function progressRenderer(io: CliIo): (event: RunEvent) => void {
  return io.stderrIsTerminal ? liveRenderer(io) : plainRenderer(io);
}

const PHASE_WORDS = {
  ingest: "ingesting the canaries and the control record",
  baseline: "reading the baseline (the queries warm the caches)",
  delete: "deleting the canaries",
  window: "sampling through the deletion window",
} as const;

/** One line per phase, sample and cleanup poll, for logs. */
function plainRenderer(io: CliIo): (event: RunEvent) => void {
  const line = (text: string) => io.err(`progress: ${text}\n`);
  return (event) => {
    switch (event.type) {
      case "phase":
        if (event.phase in PHASE_WORDS) {
          line(PHASE_WORDS[event.phase as keyof typeof PHASE_WORDS]);
        }
        break;
      case "sample":
        line(sampleText(event));
        break;
      case "interrupted":
        line(interruptedText(event));
        break;
      case "cleanup_started":
        line(cleanupStartText(event));
        break;
      case "cleanup_poll":
        line(pollText(event));
        break;
      case "cleanup":
        line(
          `cleanup ${
            event.cleanup.cleanup_complete ? "complete" : "incomplete"
          } after ${event.cleanup.polls} poll(s)`,
        );
        break;
    }
  };
}

/** One line rewritten in place; interrupts and the cleanup budget get lines of their own. */
function liveRenderer(io: CliIo): (event: RunEvent) => void {
  const line = (text: string) => io.err(`\r\x1b[2K${text}`);
  const keep = (text: string) => progressNote(io, text);
  return (event) => {
    switch (event.type) {
      case "phase":
        if (event.phase === "done") io.err("\r\x1b[2K");
        else line(`${event.phase}…`);
        break;
      case "sample": {
        const s = event.sample;
        const bar = progressBar(s.started_at_seconds / event.window_seconds);
        line(`window ${bar} ${sampleText(event)}`);
        break;
      }
      case "interrupted":
        keep(interruptedText(event));
        break;
      case "cleanup_started":
        if (event.interrupted) {
          keep(cleanupStartText(event));
        } else line("cleanup…");
        break;
      case "cleanup_poll": {
        const bar = progressBar(event.at_seconds / event.limit_seconds);
        line(`cleanup ${bar} ${pollText(event)}`);
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

function sampleText(
  { sample, window_seconds: windowSeconds, control }: SampleEvent,
): string {
  const inv = sample.inventory;
  const counts = inv
    ? `source ${inv.source_records}, vector ${inv.vector_records}, cache ${inv.cache_records}`
    : "inventory failed";
  return `sample #${sample.index} at ${
    sample.started_at_seconds.toFixed(2)
  } s of the ${windowSeconds} s window: ${counts}; marker ${
    markerLabel(sample.marker_seen, sample.marker_form)
  }; control ${controlWord(control)}`;
}

/**
 * An interrupt, with the longest the user may still wait: requests end by
 * the bound, and cleanup's deletions and last poll may each still take a
 * second past it.
 */
function interruptedText(
  event: Extract<RunEvent, { type: "interrupted" }>,
): string {
  const bound = seconds(event.bound_seconds);
  const most = seconds(interruptedRunMaxSeconds(event.bound_seconds));
  const why =
    `requests end by ${bound} s, then cleanup's deletions and last poll get at most 1 s per request`;
  return `interrupted during ${event.phase}: ${
    event.phase === "cleanup"
      ? `cleanup now ends within ${most} s (${why})`
      : `no verdict without the final sample; stopping within ${most} s, cleanup included (${why})`
  } (Ctrl-C again exits at once)`;
}

function cleanupStartText(
  event: Extract<RunEvent, { type: "cleanup_started" }>,
): string {
  if (event.interrupted && event.limit_seconds === 0) {
    return "cleanup: the time allowed after the interrupt has run out; deleting every issued id and polling once, each request given at most 1 s";
  }
  const settle = event.settle_seconds > 0
    ? ` and ${event.settle_seconds} s past the last deletion (the window saw the counts change that late)`
    : "";
  return `cleanup: deleting every issued id, then polling both namespaces until clean${settle}, for at most ${
    seconds(event.limit_seconds)
  } s${event.interrupted ? " (what is left after the interrupt)" : ""}`;
}

/** Seconds as a bound reads them: at most one decimal, rounded up. */
function seconds(value: number): number {
  return Math.ceil(value * 10 - 1e-9) / 10;
}

function pollText(
  event: Extract<RunEvent, { type: "cleanup_poll" }>,
): string {
  return `${pollTiming(event)}: ${event.clean ? "clean" : "not clean yet"}${
    event.deleted_again.length > 0
      ? `; records came back in the ${
        event.deleted_again.join(" and ")
      } namespace after a clean poll, deleting them again`
      : ""
  }`;
}

/**
 * A cleanup poll's number (from 1) and start against its limit. A poll at
 * or past the limit is the last; one that starts past it was held back by
 * the requests before it (deletions, or the previous poll, slower than the
 * limit), and saying "of at most 0 s" or "of 10 s" of it would misstate
 * how long cleanup took.
 */
function pollTiming(
  poll: Pick<
    Extract<RunEvent, { type: "cleanup_poll" }>,
    "poll" | "at_seconds" | "limit_seconds"
  >,
): string {
  const at = poll.at_seconds.toFixed(2);
  const limit = seconds(poll.limit_seconds);
  if (poll.at_seconds < poll.limit_seconds) {
    return `cleanup poll #${poll.poll} at ${at} s of at most ${limit} s`;
  }
  if (limit === 0) {
    return `cleanup poll #${poll.poll}, the last, at ${at} s (no polling time was left after the interrupt)`;
  }
  return Number(at) > limit
    ? `cleanup poll #${poll.poll}, the last, at ${at} s (limit ${limit} s, overrun by the requests before it)`
    : `cleanup poll #${poll.poll}, the last, at ${at} s (polling time ran out at ${limit} s)`;
}

/** One poll of `external-cleanup`: its timing, what each namespace still counts, and the markers still retrievable. */
export function leftoversPollLine(poll: CleanupPoll): string {
  const counts = (["test", "control"] as const).map((role) => {
    const c = poll.remaining[role];
    return c
      ? `${role} ${c.source_records}/${c.vector_records}/${c.cache_records}${
        c.complete ? "" : " (incomplete)"
      }`
      : `${role} unknown`;
  });
  const timing = pollTiming({
    // Numbered from 1, as the run's own cleanup polls are.
    poll: poll.index + 1,
    at_seconds: poll.started_at_seconds,
    limit_seconds: poll.window_seconds,
  });
  return `${timing}: ${counts.join(", ")} (source/vector/cache)${
    markerWords(poll.marker_seen)
  }\n`;
}

/** The markers retrievable at a poll, or nothing when none was. */
function markerWords(seen: CleanupPoll["marker_seen"]): string {
  const retrievable = (["test", "control"] as const).filter((role) =>
    seen[role] === true
  );
  return retrievable.length === 0
    ? ""
    : `; ${retrievable.join(" and ")} marker retrievable`;
}

function progressBar(fraction: number): string {
  const width = 20;
  const share = Number.isFinite(fraction) ? fraction : 1;
  const filled = Math.max(0, Math.min(width, Math.round(share * width)));
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
}

/** Human label of a marker flag: `SEEN`, `RENDERED` (seen in another spelling), `gone` or `unknown`. */
export function markerLabel(
  seen: boolean | null,
  form: MarkerForm | null = null,
): string {
  if (seen === null) return "unknown";
  if (!seen) return "gone";
  return form === "rendered" ? "RENDERED" : "SEEN";
}

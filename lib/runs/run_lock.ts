/**
 * One external run at a time per process. Every external run (CLI, job
 * manager, library) takes the process's lock before its first request, so a
 * server that starts runs in the background never runs two against staging
 * apps at once, and a CLI run sharing that process is refused too.
 *
 * @module
 */

import { ConflictError } from "../errors.ts";

/** A run was refused because another external run holds the lock. */
export class RunBusyError extends ConflictError {
  /** The run that is still running. */
  readonly runningRunId: string;

  /** Names the run that holds the lock. */
  constructor(runningRunId: string) {
    super(
      `Cannot start a run: run ${runningRunId} is still running in this process, which runs one at a time; wait for it to finish and start again`,
    );
    this.name = "RunBusyError";
    this.runningRunId = runningRunId;
  }
}

/** A lock held by at most one run id. */
export class RunLock {
  #holder: string | null = null;

  /** The run id holding the lock, or `null`. */
  get holder(): string | null {
    return this.#holder;
  }

  /** Throws {@link RunBusyError} while another run holds the lock. */
  refuseIfHeld(): void {
    if (this.#holder !== null) throw new RunBusyError(this.#holder);
  }

  /** Takes the lock for `runId` at once or throws; returns its release. */
  acquire(runId: string): () => void {
    this.refuseIfHeld();
    this.#holder = runId;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holder = null;
    };
  }
}

/** The lock every external run of this process takes unless told otherwise. */
export const PROCESS_RUN_LOCK: RunLock = new RunLock();

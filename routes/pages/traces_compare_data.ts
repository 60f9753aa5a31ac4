/**
 * What `/traces/compare` and its JSON twin hold: the loader fills it, the
 * body renders it.
 *
 * @module
 */

import type { RootComparison, RootRead } from "../../lib/obs/query/mod.ts";
import type { FormRefusal } from "../ui/form_refusal.tsx";
import type { CompareRequest } from "../ui/trace_params.ts";

/** A side's read without its events (the comparison holds what differs). */
export type SideRead = Omit<RootRead, "events"> & { events: number };

/** The data of the comparison page and its JSON twin. */
export interface CompareData {
  request: CompareRequest;
  provisioned: boolean;
  /** Always false: a comparison reads recorded metadata and runs nothing. */
  executed: false;
  baseline: SideRead | null;
  candidate: SideRead | null;
  comparison: RootComparison | null;
}

/**
 * A comparison the page refused, as its page shows it (never its JSON twin,
 * which answers with the error): the form again, filled with what was sent.
 */
export interface RefusedCompare {
  refused: FormRefusal;
}

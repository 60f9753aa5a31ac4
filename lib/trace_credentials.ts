/**
 * The environment variables that hold Trace's own secrets. A staging config
 * names the variable of its adapter's bearer token (`token_env`), whose value
 * is sent to `base_url`: none of these may be that variable, or a config
 * (one from a pull request, say) would hand Trace's credential to a host of
 * its choosing.
 *
 * @module
 */

/** Variables holding Trace's own credentials. */
export const TRACE_CREDENTIALS: readonly string[] = [
  "TRACE_INGEST_TOKEN",
  "TRACE_UI_AUTH_TOKEN",
  "TRACE_UI_AUTH_ACCOUNTS",
  "TRACE_DB_AUTH_TOKEN",
];

/**
 * Why `name` may not be a `token_env`, or `null` when it may. Compared
 * without case: Windows reads environment variables so.
 */
export function traceCredentialProblem(name: string): string | null {
  return TRACE_CREDENTIALS.includes(name.toUpperCase())
    ? `it names one of Trace's own credentials (${
      TRACE_CREDENTIALS.join(", ")
    }), which the staging adapter would receive; give the staging token a variable of its own`
    : null;
}

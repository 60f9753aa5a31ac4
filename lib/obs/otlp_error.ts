/** The error an OTLP/HTTP request is refused with, carrying its HTTP status. */

import { ConfigError } from "../errors.ts";

/** HTTP statuses an OTLP request can be refused with. */
export const OTLP_REFUSAL_STATUSES = [400, 409, 413, 415] as const;
/** One of {@link OTLP_REFUSAL_STATUSES}. */
export type OtlpRefusalStatus = typeof OTLP_REFUSAL_STATUSES[number];

/** An OTLP request that cannot be accepted as sent; nothing was written. */
export class OtlpRequestError extends ConfigError {
  /** The HTTP status the refusal maps to. */
  readonly status: OtlpRefusalStatus;

  constructor(
    status: OtlpRefusalStatus,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "OtlpRequestError";
    this.status = status;
  }
}

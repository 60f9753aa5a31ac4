/** The errors an OTLP/HTTP request is refused with. */

import { ConfigError, TraceError } from "../../errors.ts";

/** An OTLP request that cannot be decoded or mapped as sent; nothing was written. */
export class OtlpRequestError extends ConfigError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OtlpRequestError";
  }
}

/** A span names a tenant its request's credential may not write to; nothing was written. */
export class OtlpTenantError extends TraceError {
  constructor(message: string, options?: ErrorOptions) {
    super("forbidden", message, options);
    this.name = "OtlpTenantError";
  }
}

/** The error an OTLP/HTTP request is refused with when its content cannot be used. */

import { ConfigError } from "../../errors.ts";

/** An OTLP request that cannot be decoded or mapped as sent; nothing was written. */
export class OtlpRequestError extends ConfigError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OtlpRequestError";
  }
}

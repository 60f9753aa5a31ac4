/**
 * Response headers of every UI route: a Content-Security-Policy that allows
 * only this origin's script and stylesheet (no inline script, no inline
 * style, no framing), referrers only to this origin (login URLs carry a
 * token; `no-referrer` would also make browsers send `Origin: null` on this
 * origin's own form posts, which the origin guard refuses), and Hono's other
 * secure defaults. HSTS is left to a TLS-terminating proxy: the
 * server itself speaks plain HTTP on loopback.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/** The Content-Security-Policy of UI responses, as sent. */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** Secure headers for UI pages, JSON twins and sign-in routes. */
export function uiHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: CONTENT_SECURITY_POLICY,
    strictTransportSecurity: false,
    referrerPolicy: "same-origin",
  });
}

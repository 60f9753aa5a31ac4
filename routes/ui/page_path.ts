/**
 * How a page's id sits in its path. A page and its JSON twin share one
 * route shape (`/targets/:id` and `/targets/:id.json`), so an id that itself
 * ends in ".json" is linked with a trailing slash, a route of its own.
 *
 * @module
 */

/**
 * An id as the last segment of a page path: encoded, and followed by a
 * slash when it ends in ".json", where it would otherwise read as the JSON
 * twin of the id without that suffix.
 */
export function pageIdPath(id: string): string {
  const encoded = encodeURIComponent(id);
  return id.endsWith(".json") ? `${encoded}/` : encoded;
}

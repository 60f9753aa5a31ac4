/**
 * Small wording helpers the commands' text answers share.
 *
 * @module
 */

/** `1 event`, `2 events`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

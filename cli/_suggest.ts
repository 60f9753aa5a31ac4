/**
 * "Did you mean …?" for mistyped command names. `@std/text`'s
 * `closestString` would do this, but JSR is out of reach; the edit distance
 * below is the textbook dynamic programme over two short words.
 *
 * @module
 */

/** Levenshtein distance between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        substitution,
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The known name closest to `word`, if it is close enough to be a typo. */
export function closestName(
  word: string,
  known: readonly string[],
): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const distance = editDistance(word.toLowerCase(), name);
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  const tolerance = Math.max(1, Math.floor(word.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}

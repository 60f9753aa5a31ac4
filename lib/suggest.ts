/**
 * "Did you mean …?" for mistyped names (commands, registered targets). `@std/text`'s
 * `closestString` would do this, but JSR is out of reach; the distance below
 * is the textbook dynamic programme over two short words, with swapped
 * neighbours (`rnu` for `run`, the commonest typing slip) counted as one
 * edit rather than two.
 *
 * @module
 */

/**
 * Edit distance between `a` and `b` (optimal string alignment): insertions,
 * deletions, substitutions and transpositions of two adjacent characters
 * each count one.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1];
      row[j] = Math.min(
        rows[i - 1]![j]! + 1,
        row[j - 1]! + 1,
        rows[i - 1]![j - 1]! + (same ? 0 : 1),
      );
      if (
        i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]
      ) {
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
      }
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name closest to `word`, if it is close enough to be a typo:
 * one edit in a word of up to five letters, then one more per three.
 */
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

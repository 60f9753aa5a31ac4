/**
 * Deterministic local embeddings: tokens are hashed into a fixed number of
 * signed dimensions and the vector is L2-normalised. No model, no network, and
 * the same text always yields the same vector, which is what a known-behaviour
 * system needs; an exact token match (such as a synthetic marker) scores high.
 *
 * @module
 */

/** Default dimensionality of {@link HashEmbedder} vectors. */
export const DEFAULT_DIMENSIONS = 256;

/** An embedding vector. */
export type Vector = Float32Array;

/** Turns text into a vector. */
export interface Embedder {
  readonly dimensions: number;
  embed(text: string): Vector;
}

const encoder = new TextEncoder();

/** Lower-cased word tokens; underscores stay inside tokens so `trace_canary_x` is one token. */
export function tokenize(text: string): string[] {
  return text.normalize("NFKC").toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((
    token,
  ) => token !== "");
}

/** 32-bit FNV-1a over the UTF-8 bytes of `text`. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Feature hashing embedder (the "hashing trick"), L2-normalised. */
export class HashEmbedder implements Embedder {
  readonly dimensions: number;

  constructor(options: { dimensions?: number } = {}) {
    const dimensions = options.dimensions ?? DEFAULT_DIMENSIONS;
    if (!Number.isInteger(dimensions) || dimensions < 1) {
      throw new RangeError(
        `Cannot create embedder: dimensions must be a positive integer, got ${dimensions}`,
      );
    }
    this.dimensions = dimensions;
  }

  embed(text: string): Vector {
    const vector = new Float32Array(this.dimensions);
    for (const token of tokenize(text)) {
      const hash = fnv1a(token);
      // A second, independent bit picks the sign so collisions tend to cancel out.
      const sign = (fnv1a(`#${token}`) & 1) === 0 ? 1 : -1;
      const slot = hash % this.dimensions;
      vector[slot] = (vector[slot] ?? 0) + sign;
    }
    return normalize(vector);
  }
}

/** Scales `vector` in place to unit length; the zero vector stays zero. */
export function normalize(vector: Vector): Vector {
  const length = Math.sqrt(dot(vector, vector));
  if (length === 0) return vector;
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] ?? 0) / length;
  return vector;
}

/** Cosine similarity in [-1, 1]; 0 when either vector is zero. */
export function cosineSimilarity(a: Vector, b: Vector): number {
  if (a.length !== b.length) {
    throw new RangeError(
      `Cannot compare vectors: dimensions differ (${a.length} and ${b.length})`,
    );
  }
  const denominator = Math.sqrt(dot(a, a) * dot(b, b));
  return denominator === 0 ? 0 : dot(a, b) / denominator;
}

function dot(a: Vector, b: Vector): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

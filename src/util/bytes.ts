/**
 * Byte helpers shared by every layer.
 *
 * @module
 */

/**
 * Join byte arrays into one. `total`, when the caller already knows it,
 * saves a pass over the parts.
 *
 * @example
 * ```ts
 * import { concatBytes } from "./bytes.ts";
 * concatBytes([new Uint8Array([1]), new Uint8Array([2, 3])]); // Uint8Array [1, 2, 3]
 * ```
 */
export function concatBytes(
  parts: readonly Uint8Array[],
  total: number = parts.reduce((n, p) => n + p.byteLength, 0),
): Uint8Array {
  // One part needs no copy; callers treat the result as read-only.
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

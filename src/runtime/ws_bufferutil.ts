/**
 * What the `ws` package asks of its optional native `bufferutil` helper,
 * in plain JavaScript, a 32-bit word at a time: the binary bundles this
 * module under that name (scripts/binary/sea_build.ts).
 *
 * Every frame a client sends is masked, and `ws`'s own fallback unmasks it
 * a byte at a time: ~1 GB/s under Node 22 here, 1.2 of the 5.6 s a 768 MiB
 * websocket upload cost the binary's server (a CPU profile). XORing whole
 * words runs at ~6 GB/s. Deno unmasks in its runtime and does not use this.
 * Under plain Node (the npm package), where `ws` is loaded from
 * node_modules, {@linkcode lendToWs} hands it these functions instead.
 *
 * @module
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The 4-byte mask as the little-endian word that starts at byte `phase` of it. */
function maskWord(mask: Uint8Array, phase: number): number {
  return (mask[phase & 3] | (mask[(phase + 1) & 3] << 8) | (mask[(phase + 2) & 3] << 16) |
    (mask[(phase + 3) & 3] << 24)) | 0;
}

/**
 * XOR `length` bytes of `source` with the repeating `mask` into `output`
 * from `offset`. Where both sides sit at the same distance from a 4-byte
 * boundary, the bulk goes a word at a time; elsewhere a byte at a time.
 * The mask word assumes little-endian memory, as on every target of the
 * binary.
 *
 * @example
 * ```ts
 * import { mask } from "./ws_bufferutil.ts";
 * const out = new Uint8Array(4);
 * mask(new Uint8Array([1, 2, 3, 4]), new Uint8Array([1, 1, 1, 1]), out, 0, 4);
 * // out is [0, 3, 2, 5]
 * ```
 */
export function mask(
  source: Uint8Array,
  maskBytes: Uint8Array,
  output: Uint8Array,
  offset: number,
  length: number,
): void {
  let i = 0;
  const from = source.byteOffset;
  const to = output.byteOffset + offset;
  if ((from & 3) === (to & 3)) {
    const head = Math.min(length, (4 - (from & 3)) & 3);
    for (; i < head; i++) output[offset + i] = source[i] ^ maskBytes[i & 3];
    const words = (length - i) >>> 2;
    if (words > 0) {
      const m = maskWord(maskBytes, i);
      const src = new Int32Array(source.buffer, from + i, words);
      const dst = new Int32Array(output.buffer, to + i, words);
      for (let w = 0; w < words; w++) dst[w] = src[w] ^ m;
      i += words * 4;
    }
  }
  for (; i < length; i++) output[offset + i] = source[i] ^ maskBytes[i & 3];
}

/**
 * XOR `buffer` in place with the repeating `mask`: {@linkcode mask} onto
 * itself, so always a word at a time past the first bytes.
 *
 * @example
 * ```ts
 * import { unmask } from "./ws_bufferutil.ts";
 * const data = new Uint8Array([0, 3, 2, 5]);
 * unmask(data, new Uint8Array([1, 1, 1, 1])); // data is [1, 2, 3, 4]
 * ```
 */
export function unmask(buffer: Uint8Array, maskBytes: Uint8Array): void {
  mask(buffer, maskBytes, buffer, 0, buffer.length);
}

/**
 * Give the `ws` package that `import("ws")` loads {@linkcode mask} and
 * {@linkcode unmask}, when it would XOR a byte at a time (no native
 * `bufferutil` installed): the npm package under Node, whose websocket
 * uploads spent 38% of the server's time in `ws`'s own loop. `ws`'s
 * receiver and sender take the functions from its `lib/buffer-util.js`
 * when they load, so this must run before `ws` is first loaded; later, or
 * where `ws` cannot be found (the binary bundles `ws` with these functions
 * already), it changes nothing.
 *
 * @returns whether `ws` now uses these functions
 *
 * @example
 * ```ts
 * import { lendToWs } from "./ws_bufferutil.ts";
 * lendToWs(); // true under Node with ws installed and not yet loaded
 * const { WebSocketServer } = await import("ws");
 * ```
 */
export function lendToWs(): boolean {
  try {
    const require = createRequire(import.meta.url);
    const lib = join(dirname(require.resolve("ws")), "lib");
    const util = require(join(lib, "buffer-util.js"));
    if (util.unmask === unmask) return true;
    // Loaded already: its receiver holds the function it found.
    if (require.cache[join(lib, "receiver.js")]) return false;
    // ws's own byte-wise fallbacks are named functions; the wrappers it
    // puts around a native bufferutil are not.
    if (util.unmask?.name !== "_unmask" || util.mask?.name !== "_mask") return false;
    util.mask = mask;
    util.unmask = unmask;
    return true;
  } catch {
    // No resolvable ws here (a bundle, or Deno without node_modules).
    return false;
  }
}

/**
 * System calls that Node has no API for, made by a native addon that the
 * program names once. Deno makes the same calls through its FFI (libc.ts),
 * so this matters to a server under Node: the binary and the npm package
 * provide node-pty's addon, which scripts/patch_node_pty.cjs extends with
 * these calls. The addon is loaded on the first call that needs it, so a
 * server that never needs one never loads it for that.
 *
 * @module
 */

/** The calls an addon may provide; each is optional. */
export interface NativeCalls {
  /** `fcntl(fd, F_SETPIPE_SZ, bytes)`: the size granted, or a negative errno. */
  setPipeSize?(fd: number, bytes: number): number;
  /**
   * Off the event loop: `sync_file_range(fd, offset, length,
   * SYNC_FILE_RANGE_WRITE)` (a zero `length` skips it), then
   * `posix_fadvise(fd, dropOffset, dropLength, POSIX_FADV_DONTNEED)` (a
   * zero `dropLength` skips it). Resolves to 0, or a negative errno.
   */
  writeBehind?(
    fd: number,
    offset: number,
    length: number,
    dropOffset: number,
    dropLength: number,
  ): Promise<number>;
}

let loader: (() => NativeCalls | undefined) | undefined;
let loaded: NativeCalls | undefined;

/**
 * Name where the native calls come from: `load` runs once, on the first
 * {@linkcode nativeCall} after this. A load that throws or returns
 * undefined means none of the calls exist, and callers do without.
 *
 * @example
 * ```ts
 * import { nativeCall, provideNativeCalls } from "./native_calls.ts";
 * provideNativeCalls(() => ({ setPipeSize: () => -38 })); // ENOSYS, for the example
 * nativeCall("setPipeSize")?.(1, 1 << 20); // -38
 * ```
 */
export function provideNativeCalls(load: () => NativeCalls | undefined): void {
  loader = load;
  loaded = undefined;
}

/**
 * The provided call named `name`, bound to its addon, loading the addon
 * on first use; undefined when none was provided or it lacks this call.
 *
 * @example
 * ```ts
 * import { nativeCall } from "./native_calls.ts";
 * const setPipeSize = nativeCall("setPipeSize"); // undefined unless provided
 * ```
 */
export function nativeCall<K extends keyof NativeCalls>(name: K): NativeCalls[K] | undefined {
  if (!loaded && loader) {
    const load = loader;
    loader = undefined;
    try {
      loaded = load() ?? {};
    } catch {
      // The addon is missing or would not load: no native calls.
      loaded = {};
    }
  }
  const call = loaded?.[name];
  return typeof call === "function" ? call.bind(loaded) as NativeCalls[K] : undefined;
}

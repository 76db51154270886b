/**
 * The few libc calls the server makes itself under Deno, through its FFI:
 * looked up once, only on Linux with glibc, and only when `--allow-ffi`
 * was granted (queried first: asking for a permission that was not given
 * would prompt on a terminal). Elsewhere {@linkcode denoLibc} is null and
 * callers do without.
 *
 * @module
 */
import process from "node:process";

/** The calls, as Deno's FFI exposes them. */
export interface DenoLibc {
  /** `fcntl(fd, cmd, arg)`: the result, or -1. */
  fcntl(fd: number, cmd: number, arg: number): number;
  /**
   * `write(fd, bytes, length)` on a thread of Deno's own (a nonblocking FFI
   * symbol), so the event loop goes on meanwhile: bytes written, or -1.
   * `bytes` must not be touched until the promise settles.
   */
  write(fd: number, bytes: Uint8Array, length: number): Promise<number | bigint>;
  /** `pwrite(fd, bytes, length, offset)`, likewise. */
  pwrite(fd: number, bytes: Uint8Array, length: number, offset: number): Promise<number | bigint>;
  /**
   * `write(fd, bytes, length)` on the calling thread: bytes written, or -1.
   * Only for writes that cannot block (direct_write.ts checks first).
   */
  writeHere(fd: number, bytes: Uint8Array, length: number): number | bigint;
  /** `ioctl(fd, request, out)` with a pointer argument: 0, or -1. */
  ioctl(fd: number, request: number, out: Int32Array): number;
  /** `sync_file_range(fd, offset, length, flags)` on a thread of Deno's own: 0, or -1. */
  sync_file_range(fd: number, offset: number, length: number, flags: number): Promise<number>;
  /** `posix_fadvise(fd, offset, length, advice)` on a thread of Deno's own: 0, or an errno. */
  posix_fadvise(fd: number, offset: number, length: number, advice: number): Promise<number>;
}

interface DenoFfi {
  permissions: { querySync(desc: { name: "ffi" }): { state: string } };
  dlopen(path: string, symbols: Record<string, unknown>): { symbols: DenoLibc };
}

let libc: DenoLibc | null | undefined;

/**
 * libc through Deno's FFI, or null (not Deno, not Linux, no glibc, or no
 * `--allow-ffi`).
 *
 * @example
 * ```ts
 * import { denoLibc } from "./libc.ts";
 * const libc = denoLibc();
 * if (libc) await libc.write(1, new TextEncoder().encode("hi\n"), 3);
 * ```
 */
export function denoLibc(): DenoLibc | null {
  if (libc !== undefined) return libc;
  libc = null;
  const deno = (globalThis as unknown as { Deno?: DenoFfi }).Deno;
  if (!deno || process.platform !== "linux") return libc;
  try {
    if (deno.permissions.querySync({ name: "ffi" }).state !== "granted") return libc;
    libc = deno.dlopen("libc.so.6", {
      fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
      writeHere: { name: "write", parameters: ["i32", "buffer", "usize"], result: "isize" },
      ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
      write: { parameters: ["i32", "buffer", "usize"], result: "isize", nonblocking: true },
      pwrite: {
        parameters: ["i32", "buffer", "usize", "i64"],
        result: "isize",
        nonblocking: true,
      },
      sync_file_range: {
        parameters: ["i32", "i64", "i64", "u32"],
        result: "i32",
        nonblocking: true,
      },
      posix_fadvise: {
        parameters: ["i32", "i64", "i64", "i32"],
        result: "i32",
        nonblocking: true,
      },
    }).symbols;
  } catch {
    // No glibc, or FFI refused.
  }
  return libc;
}

/**
 * Turning a runtime's operating-system error into its POSIX name
 * (`ENOENT`, ...). Node puts the name in `err.code`; Deno leaves `code`
 * unset on some errors and says what happened through its error classes
 * (`Deno.errors.NotFound`) or only in the message (`(os error 27)`). That
 * knowledge lives here so the filesystem and the server need not know
 * which runtime they run on.
 *
 * @module
 */
import { constants as osConstants } from "node:os";
import { ErrorCode, RpcError } from "../protocol/errors.ts";

/** Deno's error class names (`err.name`) with the POSIX error each stands for. */
const DENO_ERROR_ERRNO: Record<string, string> = {
  NotFound: "ENOENT",
  PermissionDenied: "EACCES",
  AlreadyExists: "EEXIST",
  IsADirectory: "EISDIR",
  NotADirectory: "ENOTDIR",
  DirectoryNotEmpty: "ENOTEMPTY",
  InvalidData: "EINVAL",
  FilesystemLoop: "ELOOP",
  Busy: "EBUSY",
};

/** This platform's errno numbers to their names, for Deno's `(os error N)`. */
const ERRNO_NAMES = new Map<number, string>(
  Object.entries(osConstants.errno).map(([name, value]) => [value, name]),
);

/**
 * The name of this platform's errno `num` (`EIO` for 5 on Linux), or
 * undefined for a number it does not name.
 *
 * @example
 * ```ts
 * import { errnoName } from "./errno.ts";
 * errnoName(2); // "ENOENT"
 * ```
 */
export function errnoName(num: number): string | undefined {
  return ERRNO_NAMES.get(num);
}

/**
 * The POSIX name an error declares through `err.code` or its Deno error
 * class, or undefined when it has none.
 *
 * @example
 * ```ts
 * import { declaredErrnoOf } from "./errno.ts";
 * declaredErrnoOf(Object.assign(new Error("gone"), { code: "ENOENT" })); // "ENOENT"
 * ```
 */
export function declaredErrnoOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && /^E[A-Z0-9]+$/.test(code)) return code;
  const name = (err as { name?: unknown }).name;
  if (typeof name === "string" && name in DENO_ERROR_ERRNO) {
    return DENO_ERROR_ERRNO[name];
  }
  return undefined;
}

/**
 * The POSIX name of a filesystem error: as {@linkcode declaredErrnoOf},
 * else from a message ending in `(os error N)`, which is all Deno gives for
 * some errors (e.g. `EFBIG` from a write).
 *
 * @example
 * ```ts
 * import { errnoOf } from "./errno.ts";
 * errnoOf(new Error("write failed (os error 2)")); // "ENOENT" on Linux
 * ```
 */
export function errnoOf(err: unknown): string | undefined {
  const known = declaredErrnoOf(err);
  if (known) return known;
  const message = err instanceof Error ? err.message : "";
  const match = /\(os error (\d+)\)/.exec(message);
  return match ? ERRNO_NAMES.get(Number(match[1])) : undefined;
}

/**
 * Turn an operating-system error into an {@linkcode RpcError} with
 * `data.errno` (as {@linkcode declaredErrnoOf} finds it), keeping an
 * existing `RpcError` as it is.
 *
 * @param err the thrown value
 * @param what a description of the operation and its operand, e.g. `spawn ls`
 * @param code the code to use (default `InternalError`)
 *
 * @example
 * ```ts
 * import { toRpcError } from "./errno.ts";
 * toRpcError({ code: "EACCES" }, "fs/readFile").data; // { errno: "EACCES" }
 * ```
 */
export function toRpcError(
  err: unknown,
  what: string,
  code: number = ErrorCode.InternalError,
): RpcError {
  if (err instanceof RpcError) return err;
  const errno = declaredErrnoOf(err);
  const detail = err instanceof Error ? err.message : String(err);
  return new RpcError(
    code,
    `${what}: ${detail}`,
    errno ? { errno } : undefined,
  );
}

/**
 * The rules for the in-place parts of the filesystem contract: which
 * `offset`/`length` a ranged read accepts, and which of `append`/`offset`
 * a write may carry. Pure, and shared by the local filesystem, the server's
 * parameter checks and the remote client's early checks, so that all three
 * refuse the same values with the same words.
 *
 * @module
 */
import { show } from "../protocol/show.ts";
import { refused } from "./errno.ts";
import type { ReadRangeOptions, WriteFileOptions } from "./types.ts";

/** The largest byte offset accepted anywhere (2^53 - 1: exact in a JSON number). */
export const MAX_FILE_OFFSET: number = Number.MAX_SAFE_INTEGER;

/**
 * Why `value` is not a usable byte count or offset for `field`, or
 * undefined when it is (absent counts as usable).
 *
 * @example
 * ```ts
 * import { integerProblem } from "./range.ts";
 * integerProblem("offset", -1, 100); // "offset must be an integer from 0 to 100, got -1"
 * integerProblem("offset", 5, 100); // undefined
 * ```
 */
export function integerProblem(field: string, value: unknown, max: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > max) {
    return `${field} must be an integer from 0 to ${max}, got ${show(value)}`;
  }
  return undefined;
}

/**
 * Why a ranged read of `length` bytes is refused under the read limit
 * `limit`, or undefined. Reading more than the limit in one piece is a
 * request that cannot be served, not a file that is too large: it is
 * refused as a bad parameter, and a client reads the file in parts.
 *
 * @example
 * ```ts
 * import { lengthProblem } from "./range.ts";
 * lengthProblem(200, 100); // "length 200 is over the read limit of 100 bytes"
 * ```
 */
export function lengthProblem(length: number | undefined, limit: number): string | undefined {
  if (length === undefined || length <= limit) return undefined;
  return `length ${length} is over the read limit of ${limit} bytes`;
}

/** A ranged read's checked bounds. */
export interface CheckedRange {
  /** The first byte. */
  offset: number;
  /** The most bytes, or undefined for "to the end". */
  length: number | undefined;
}

/**
 * The bounds of a ranged read, or an `invalidInput` `FileSystemError`
 * (errno `EINVAL`) naming the bad field.
 *
 * @param limit the read limit in bytes
 * @throws {FileSystemError} for a negative, fractional or huge `offset` or
 * `length`, or a `length` over `limit`
 *
 * @example
 * ```ts
 * import { checkRange } from "./range.ts";
 * checkRange("readFile", "/tmp/a", { offset: 4 }, 1024); // { offset: 4, length: undefined }
 * ```
 */
export function checkRange(
  op: string,
  path: string,
  options: ReadRangeOptions,
  limit: number,
): CheckedRange {
  const problem = integerProblem("offset", options.offset, MAX_FILE_OFFSET) ??
    integerProblem("length", options.length, MAX_FILE_OFFSET) ??
    lengthProblem(options.length ?? undefined, limit);
  if (problem) throw refused(op, path, "EINVAL", problem);
  return { offset: options.offset ?? 0, length: options.length ?? undefined };
}

/** How a write puts its bytes: replacing the file, appending, or at an offset. */
export type WritePlacement =
  | { kind: "replace" }
  | { kind: "append" }
  | { kind: "at"; offset: number };

/**
 * Why `append` and `offset` cannot go together as given, or undefined.
 *
 * @example
 * ```ts
 * import { placementProblem } from "./range.ts";
 * placementProblem(true, 0); // "append and offset exclude each other"
 * ```
 */
export function placementProblem(append: unknown, offset: unknown): string | undefined {
  if (append !== undefined && append !== null && typeof append !== "boolean") {
    return `append must be a boolean, got ${show(append)}`;
  }
  const problem = integerProblem("offset", offset, MAX_FILE_OFFSET);
  if (problem) return problem;
  if (append === true && offset !== undefined && offset !== null) {
    return "append and offset exclude each other";
  }
  return undefined;
}

/**
 * Where a write with `options` puts its bytes, or an `invalidInput`
 * `FileSystemError` (errno `EINVAL`) naming the bad field.
 *
 * @example
 * ```ts
 * import { checkPlacement } from "./range.ts";
 * checkPlacement("writeFile", "/tmp/a", { offset: 8 }); // { kind: "at", offset: 8 }
 * checkPlacement("writeFile", "/tmp/a", {}); // { kind: "replace" }
 * ```
 */
export function checkPlacement(
  op: string,
  path: string,
  options: WriteFileOptions,
): WritePlacement {
  const problem = placementProblem(options.append, options.offset);
  if (problem) throw refused(op, path, "EINVAL", problem);
  if (options.append === true) return { kind: "append" };
  if (options.offset !== undefined && options.offset !== null) {
    return { kind: "at", offset: options.offset };
  }
  return { kind: "replace" };
}

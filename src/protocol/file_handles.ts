/**
 * File handles: `fs/open`, `fs/readBlock`, `fs/writeBlock` and `fs/close`,
 * for files of any size in blocks of at most 1 MiB. The Codex CLI 0.171
 * reads skills and uploads through them (flags `sandboxedFileStreaming`,
 * `fileWriteStreaming`); **[ext]** v0 clients get them too
 * (`capabilities.fileHandles`). Shapes, limits and error codes are
 * upstream's; where this server differs (a `replace` handle writes a
 * temporary file that replaces the target only on close or `eof`) it is
 * said at the field.
 *
 * @module
 */
import type { RequestType } from "./descriptors.ts";
import { invalidParams, invalidRequest } from "./errors.ts";
import { show } from "./show.ts";

/** The most bytes one block reads or writes (upstream's limit). */
export const MAX_BLOCK_BYTES = 1024 * 1024;

/** The longest handle id, in UTF-8 bytes (upstream's limit). */
export const MAX_HANDLE_ID_BYTES = 32;

/** The most handles open at once in one session (upstream's, per connection). */
export const MAX_OPEN_HANDLES = 128;

/** What a handle is for. */
export type FsOpenMode = "read" | "replace";

/** Params of `fs/open`. */
export interface FsOpenParams {
  /** Chosen by the client: at most 32 bytes, unique among the open handles. */
  handleId: string;
  /** The file (a `file://` URI in the Codex dialect, an absolute path in v0). */
  path: string;
  /**
   * `read` (the default) opens an existing regular file. `replace` creates
   * the file or replaces it: blocks go to a temporary file beside it that
   * takes its place on `fs/close` (or a block with `eof`); a handle that is
   * never closed leaves neither the temporary file nor a change behind.
   */
  mode?: FsOpenMode;
  /** Checked once, at the open, as every fs call's sandbox is. */
  sandbox?: unknown;
}

/** Params of `fs/readBlock`. */
export interface FsReadBlockParams {
  /** An open `read` handle. */
  handleId: string;
  /** Where the block starts; past the end reads nothing. */
  offset: number;
  /** The most bytes to read: 1 to 1 MiB. */
  len: number;
}

/** Result of `fs/readBlock`. */
export interface FsReadBlockResult {
  /** The bytes, base64. */
  chunk: string;
  /** True when fewer than `len` bytes were left: the end of the file. */
  eof: boolean;
}

/** Params of `fs/writeBlock`. */
export interface FsWriteBlockParams {
  /** An open `replace` handle. */
  handleId: string;
  /** Where the block goes; blocks may come in any order, gaps read as zeros. */
  offset: number;
  /** 1 byte to 1 MiB, base64. */
  chunk: string;
  /**
   * **[ext]** The last block: the file takes the target's place now, and
   * later blocks are refused. Upstream has no such field (it ignores it).
   */
  eof?: boolean;
}

/** Params of `fs/close`: closing an unknown handle is fine. */
export interface FsCloseParams {
  /** The handle. */
  handleId: string;
}

/** The file-handle methods, shared by both dialects. */
export const FileHandleRequests: {
  readonly fsOpen: RequestType<FsOpenParams, { handleId: string }>;
  readonly fsReadBlock: RequestType<FsReadBlockParams, FsReadBlockResult>;
  readonly fsWriteBlock: RequestType<FsWriteBlockParams, Record<string, never>>;
  readonly fsClose: RequestType<FsCloseParams, Record<string, never>>;
} = Object.freeze({
  fsOpen: Object.freeze({ method: "fs/open", kind: "request" as const }),
  fsReadBlock: Object.freeze({ method: "fs/readBlock", kind: "request" as const }),
  fsWriteBlock: Object.freeze({ method: "fs/writeBlock", kind: "request" as const }),
  fsClose: Object.freeze({ method: "fs/close", kind: "request" as const }),
});

/**
 * A handle id: a string of at most 32 UTF-8 bytes (-32602 when not a
 * string, -32600 when too long, as upstream answers).
 *
 * @example
 * ```ts
 * import { checkHandleId } from "./file_handles.ts";
 * checkHandleId({ handleId: "h1" }); // "h1"
 * ```
 */
export function checkHandleId(p: Record<string, unknown>): string {
  const id = p.handleId;
  if (typeof id !== "string") throw invalidParams(`handleId must be a string, got ${show(id)}`);
  if (new TextEncoder().encode(id).byteLength > MAX_HANDLE_ID_BYTES) {
    throw invalidRequest(`file handle ID must not exceed ${MAX_HANDLE_ID_BYTES} bytes`);
  }
  return id;
}

/**
 * `fs/open`'s `mode`: `read` when absent or null, else `read` or `replace`.
 *
 * @example
 * ```ts
 * import { checkOpenMode } from "./file_handles.ts";
 * checkOpenMode(undefined); // "read"
 * ```
 */
export function checkOpenMode(value: unknown): FsOpenMode {
  if (value === undefined || value === null || value === "read") return "read";
  if (value === "replace") return "replace";
  throw invalidParams(`mode must be "read" or "replace", got ${show(value)}`);
}

/**
 * A block's `offset`: a non-negative integer (-32602 otherwise).
 *
 * @example
 * ```ts
 * import { checkOffset } from "./file_handles.ts";
 * checkOffset({ offset: 4096 }); // 4096
 * ```
 */
export function checkOffset(p: Record<string, unknown>): number {
  const offset = p.offset;
  if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0) {
    throw invalidParams(`offset must be a non-negative integer, got ${show(offset)}`);
  }
  return offset;
}

/**
 * A block's length, checked against the 1 MiB limit: -32600 outside
 * 1..1 MiB with upstream's message, -32602 when not an integer at all.
 *
 * @param what `read` or `write`, as the message says it
 *
 * @example
 * ```ts
 * import { checkBlockLength } from "./file_handles.ts";
 * checkBlockLength(65536, "read"); // 65536
 * ```
 */
export function checkBlockLength(len: unknown, what: "read" | "write"): number {
  if (typeof len !== "number" || !Number.isInteger(len) || len < 0) {
    throw invalidParams(`len must be a non-negative integer, got ${show(len)}`);
  }
  if (len < 1 || len > MAX_BLOCK_BYTES) {
    throw invalidRequest(`file ${what} block length must be between 1 and ${MAX_BLOCK_BYTES}`);
  }
  return len;
}

/**
 * `fs/open`, `fs/readBlock`, `fs/writeBlock` and `fs/close` in both
 * dialects (see ../protocol/file_handles.ts): params checked, the open
 * behind the sandbox gate (a handle is checked once, when it is opened),
 * and the table's refusals in the dialect's codes. The Codex dialect
 * answers an unknown handle with its -32004, v0 with -32600 as for an
 * unknown process.
 *
 * @module
 */
import { encodeBase64 } from "../protocol/base64.ts";
import { ErrorCode, RpcError } from "../protocol/errors.ts";
import {
  checkBlockLength,
  checkHandleId,
  checkOffset,
  checkOpenMode,
  FileHandleRequests,
  MAX_BLOCK_BYTES,
  MAX_OPEN_HANDLES,
} from "../protocol/file_handles.ts";
import { optionalBoolean, paramsObject, requireAbsolutePath } from "../protocol/validate.ts";
import { requireBase64 } from "../protocol/validate.ts";
import { FileHandleError, FileHandles } from "../fs/file_handles.ts";
import { FileSystemError } from "../fs/types.ts";
import { fileSystemRpcError } from "./fs_methods.ts";
import { sandboxGate, type SandboxReader } from "./fs_sandbox.ts";
import type { MethodHandler } from "./method_handlers.ts";

/**
 * The most block bytes one session reads or writes at once (16 blocks of
 * 1 MiB); further block requests wait for room, so a client that sends
 * many at once does not make the server hold them all.
 */
export const BLOCK_BYTES_IN_FLIGHT = 16 * 1024 * 1024;

/** How a dialect speaks the file-handle methods. */
export interface FileHandleDialect {
  /** Reads a request's `sandbox` member. */
  readSandbox: SandboxReader;
  /** The code of "no such file" and "unknown handle" (the Codex dialect's -32004). */
  notFoundCode?: number;
}

/** What the table or the filesystem threw, as the dialect answers it. */
function rpcError(err: unknown, dialect: FileHandleDialect, readPath?: string): unknown {
  const notFound = dialect.notFoundCode;
  if (err instanceof FileHandleError) {
    if (err.problem === "unknown") {
      return new RpcError(notFound ?? ErrorCode.InvalidRequest, err.message);
    }
    if (err.problem === "notReadable" || err.problem === "notWritable") {
      // Upstream's code for this (its read or write fails with EBADF).
      return new RpcError(ErrorCode.InternalError, err.message, { errno: "EBADF" });
    }
    return new RpcError(ErrorCode.InvalidRequest, err.message);
  }
  if (!(err instanceof FileSystemError)) return err;
  if (notFound !== undefined && err.errno === "ENOENT") {
    return new RpcError(notFound, err.message, { errno: err.errno });
  }
  if (readPath !== undefined && err.errno === "EISDIR") {
    // As fs/readFile says it in the Codex dialect, and upstream's fs/open.
    return new RpcError(ErrorCode.InvalidRequest, `path \`${readPath}\` is not a file`, {
      errno: err.errno,
    });
  }
  return fileSystemRpcError(err);
}

/**
 * The four handlers over one session's table.
 *
 * @example
 * ```ts
 * import { FileHandles } from "../fs/file_handles.ts";
 * import { checkSandboxParams } from "../protocol/sandbox_params.ts";
 * import { fileHandleMethods } from "./file_handle_methods.ts";
 * const handles = new FileHandles({ maxOpen: 128, maxBytesInFlight: 16 << 20 });
 * const methods = fileHandleMethods(handles, { readSandbox: checkSandboxParams });
 * await methods.get("fs/open")!({ handleId: "h", path: "/etc/hostname" }); // { handleId: "h" }
 * ```
 */
export function fileHandleMethods(
  handles: FileHandles,
  dialect: FileHandleDialect,
): Map<string, MethodHandler> {
  const { fsOpen, fsReadBlock, fsWriteBlock, fsClose } = FileHandleRequests;
  const open: MethodHandler = async (params) => {
    const p = paramsObject(params, fsOpen.method);
    const handleId = checkHandleId(p);
    const path = requireAbsolutePath(p, "path");
    const mode = checkOpenMode(p.mode);
    try {
      await handles.open(handleId, path, mode);
    } catch (err) {
      throw rpcError(err, dialect, mode === "read" ? path : undefined);
    }
    return { handleId };
  };
  const readBlock: MethodHandler = async (params) => {
    const p = paramsObject(params, fsReadBlock.method);
    const handleId = checkHandleId(p);
    const offset = checkOffset(p);
    const len = checkBlockLength(p.len, "read");
    try {
      const { bytes, eof } = await handles.readBlock(handleId, offset, len);
      return { chunk: encodeBase64(bytes), eof };
    } catch (err) {
      throw rpcError(err, dialect);
    }
  };
  const writeBlock: MethodHandler = async (params) => {
    const p = paramsObject(params, fsWriteBlock.method);
    const handleId = checkHandleId(p);
    const offset = checkOffset(p);
    const bytes = requireBase64(p, "chunk");
    checkBlockLength(bytes.byteLength, "write");
    const eof = optionalBoolean(p, "eof", false);
    try {
      await handles.writeBlock(handleId, offset, bytes, eof);
    } catch (err) {
      throw rpcError(err, dialect);
    }
    return {};
  };
  const close: MethodHandler = async (params) => {
    const handleId = checkHandleId(paramsObject(params, fsClose.method));
    try {
      await handles.close(handleId);
    } catch (err) {
      throw rpcError(err, dialect);
    }
    return {};
  };
  return new Map([
    [fsOpen.method, sandboxGate(fsOpen.method, open, dialect.readSandbox)],
    [fsReadBlock.method, readBlock],
    [fsWriteBlock.method, writeBlock],
    [fsClose.method, close],
  ]);
}

/** A session's (or a v0 connection's) handle table, with this server's limits. */
export function sessionFileHandles(): FileHandles {
  return new FileHandles({ maxOpen: MAX_OPEN_HANDLES, maxBytesInFlight: BLOCK_BYTES_IN_FLIGHT });
}

/** The limits v0 announces in `capabilities.fileHandles`. */
export function fileHandleCapability(maxOpen: number): { maxOpen: number; maxBlockBytes: number } {
  return { maxOpen, maxBlockBytes: MAX_BLOCK_BYTES };
}

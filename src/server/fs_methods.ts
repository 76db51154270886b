/**
 * The `fs/*` methods: untrusted params in, calls on a
 * {@linkcode FileSystem} out, its failures turned into JSON-RPC errors.
 * **[ext]** Ranged `fs/readFile` (`offset`, `length`), in-place
 * `fs/writeFile` (`append`, `offset`) and `fs/rename`; without those
 * params a v0 request gets exactly the v0 answer.
 *
 * @module
 */
import { Base64Part } from "../protocol/base64.ts";
import { ErrorCode, invalidParams, RpcError } from "../protocol/errors.ts";
import { Requests } from "../protocol/descriptors.ts";
import {
  optionalBoolean,
  paramsObject,
  requireAbsolutePath,
  requireBase64,
} from "../protocol/validate.ts";
import { type FileSystem, FileSystemError, type WriteFileOptions } from "../fs/types.ts";
import { integerProblem, lengthProblem, MAX_FILE_OFFSET, placementProblem } from "../fs/range.ts";
import { payloadPool } from "../rpc/payload_pool.ts";
import { toRpcError } from "../runtime/errno.ts";
import { addHandler, type MethodHandler } from "./method_handlers.ts";
import { type TransferCollector, transferCollector } from "./transfer_collector.ts";

/**
 * The wire form of a filesystem failure: `invalidInput` is -32600, `io`
 * -32603, both with `data.errno`.
 */
export function fileSystemRpcError(err: FileSystemError): RpcError {
  const code = err.kind === "invalidInput" ? ErrorCode.InvalidRequest : ErrorCode.InternalError;
  return new RpcError(code, err.message, err.errno ? { errno: err.errno } : undefined);
}

/**
 * The read limit of `fs` when it has one, as `LocalFileSystem` does: a
 * ranged read of more is then -32602 rather than the filesystem's own
 * refusal.
 */
function readLimitOf(fs: FileSystem): number | undefined {
  const limit = (fs as { readonly maxReadFileBytes?: unknown }).maxReadFileBytes;
  return typeof limit === "number" ? limit : undefined;
}

/**
 * **[ext]** The bounds of a ranged `fs/readFile`, or undefined for a plain
 * v0 read (neither `offset` nor `length` given). A bad value, or a
 * `length` over the read limit, is -32602 naming the field.
 */
function rangeParams(
  p: Record<string, unknown>,
  limit: number | undefined,
): { offset?: number; length?: number } | undefined {
  const offset = p.offset ?? undefined;
  const length = p.length ?? undefined;
  if (offset === undefined && length === undefined) return undefined;
  const problem = integerProblem("offset", offset, MAX_FILE_OFFSET) ??
    integerProblem("length", length, MAX_FILE_OFFSET) ??
    lengthProblem(length as number | undefined, limit ?? Infinity);
  if (problem) throw invalidParams(problem);
  return { offset: offset as number | undefined, length: length as number | undefined };
}

/** **[ext]** `append` or `offset` of `fs/writeFile`: -32602 naming a bad one. */
function placementParams(p: Record<string, unknown>): WriteFileOptions {
  const problem = placementProblem(p.append, p.offset);
  if (problem) throw invalidParams(problem);
  return {
    append: p.append === true ? true : undefined,
    offset: typeof p.offset === "number" ? p.offset : undefined,
  };
}

/** Run a filesystem call, translating whatever it throws into an RpcError. */
async function run<T>(method: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof FileSystemError) throw fileSystemRpcError(err);
    throw toRpcError(err, method);
  }
}

/**
 * The bytes read, as the answer's `dataBase64`. A read that fills a buffer
 * of its own and goes out as a binary frame is adopted by the payload
 * pool, which frees it as soon as the frame was sent (the peer gives it
 * back); anything else is garbage that the collector counts.
 */
function readPart(
  data: Uint8Array,
  binaryFrame: boolean,
  collector: TransferCollector,
): Base64Part {
  const buffer = data.buffer;
  const own = buffer instanceof ArrayBuffer && data.byteOffset === 0 &&
    data.byteLength === buffer.byteLength && data.byteLength > 0;
  if (!(binaryFrame && own && payloadPool.adopt(buffer))) collector.read(data.byteLength);
  return new Base64Part(data, { binaryFrame });
}

/**
 * The methods that move file contents (`fs/readFile`, `fs/writeFile`) and
 * **[ext]** `fs/rename`, which completes a streamed write.
 */
function addContentHandlers(
  handlers: Map<string, MethodHandler>,
  fs: FileSystem,
  collector: TransferCollector,
): void {
  const limit = readLimitOf(fs);
  addHandler(handlers, Requests.fsReadFile, (params) => {
    const p = paramsObject(params, Requests.fsReadFile.method);
    const path = requireAbsolutePath(p, "path");
    const range = rangeParams(p, limit);
    // [ext] The bytes may come as a binary frame's payload (where the
    // connection carries binary frames; else as base64, as always).
    const binaryFrame = optionalBoolean(p, "binaryFrame", false);
    if (!range) {
      return run(Requests.fsReadFile.method, async () => {
        const data = await fs.readFile(path);
        return { dataBase64: readPart(data, binaryFrame, collector) };
      });
    }
    return run(Requests.fsReadFile.method, async () => {
      const { data, size, eof } = await fs.readRange(path, range);
      return { dataBase64: readPart(data, binaryFrame, collector), size, eof };
    });
  });
  addHandler(handlers, Requests.fsWriteFile, (params) => {
    const p = paramsObject(params, Requests.fsWriteFile.method);
    const path = requireAbsolutePath(p, "path");
    const data = requireBase64(p, "dataBase64");
    const placement = placementParams(p);
    return run(Requests.fsWriteFile.method, async () => {
      try {
        await fs.writeFile(path, data, placement);
      } finally {
        // Written or failed, the bytes are read no more: a payload in a
        // pooled buffer carries the next one, and anything else is garbage
        // that the collector counts.
        if (!payloadPool.give(data)) collector.wrote(data.byteLength);
      }
      return {};
    });
  });
  addHandler(handlers, Requests.fsRename, (params) => {
    const p = paramsObject(params, Requests.fsRename.method);
    const sourcePath = requireAbsolutePath(p, "sourcePath");
    const destinationPath = requireAbsolutePath(p, "destinationPath");
    return run(Requests.fsRename.method, async () => {
      await fs.rename(sourcePath, destinationPath);
      return {};
    });
  });
}

/**
 * The `fs/*` method handlers over `fs`. Params are checked before `fs` is
 * touched: a relative path or bad base64 is -32602. The bytes read and
 * written are counted by the server's `transferCollector`, which keeps
 * bulk transfers from growing memory.
 *
 * @example
 * ```ts
 * import { fsMethods } from "./fs_methods.ts";
 * import { LocalFileSystem } from "../fs/local.ts";
 * const handlers = fsMethods(new LocalFileSystem());
 * await handlers.get("fs/getMetadata")!({ path: "/tmp" });
 * // { isDirectory: true, isFile: false, createdAtMs: ..., modifiedAtMs: ... }
 * ```
 */
export function fsMethods(fs: FileSystem): Map<string, MethodHandler> {
  const handlers = new Map<string, MethodHandler>();
  addContentHandlers(handlers, fs, transferCollector);
  addHandler(handlers, Requests.fsCreateDirectory, (params) => {
    const p = paramsObject(params, Requests.fsCreateDirectory.method);
    const path = requireAbsolutePath(p, "path");
    const recursive = optionalBoolean(p, "recursive", true);
    return run(Requests.fsCreateDirectory.method, async () => {
      await fs.createDirectory(path, { recursive });
      return {};
    });
  });
  addHandler(handlers, Requests.fsGetMetadata, (params) => {
    const p = paramsObject(params, Requests.fsGetMetadata.method);
    const path = requireAbsolutePath(p, "path");
    return run(Requests.fsGetMetadata.method, () => fs.getMetadata(path));
  });
  addHandler(handlers, Requests.fsReadDirectory, (params) => {
    const p = paramsObject(params, Requests.fsReadDirectory.method);
    const path = requireAbsolutePath(p, "path");
    return run(Requests.fsReadDirectory.method, async () => ({
      entries: await fs.readDirectory(path),
    }));
  });
  addHandler(handlers, Requests.fsRemove, (params) => {
    const p = paramsObject(params, Requests.fsRemove.method);
    const path = requireAbsolutePath(p, "path");
    const recursive = optionalBoolean(p, "recursive", true);
    const force = optionalBoolean(p, "force", true);
    return run(Requests.fsRemove.method, async () => {
      await fs.remove(path, { recursive, force });
      return {};
    });
  });
  addHandler(handlers, Requests.fsCopy, (params) => {
    const p = paramsObject(params, Requests.fsCopy.method);
    const sourcePath = requireAbsolutePath(p, "sourcePath");
    const destinationPath = requireAbsolutePath(p, "destinationPath");
    const recursive = optionalBoolean(p, "recursive", false);
    return run(Requests.fsCopy.method, async () => {
      await fs.copy(sourcePath, destinationPath, { recursive });
      return {};
    });
  });
  return handlers;
}

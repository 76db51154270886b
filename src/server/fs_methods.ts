/**
 * The `fs/*` methods: untrusted params in, calls on a
 * {@linkcode FileSystem} out, its failures turned into JSON-RPC errors.
 *
 * @module
 */
import { encodeBase64 } from "../protocol/base64.ts";
import { ErrorCode, RpcError } from "../protocol/errors.ts";
import { Method } from "../protocol/methods.ts";
import {
  optionalBoolean,
  paramsObject,
  requireAbsolutePath,
  requireBase64,
} from "../protocol/validate.ts";
import { type FileSystem, FileSystemError } from "../fs/types.ts";
import { toRpcError } from "../runtime/errno.ts";
import type { MethodHandler } from "./process_methods.ts";

/**
 * The wire form of a filesystem failure: `invalidInput` is -32600, `io`
 * -32603, both with `data.errno`.
 */
export function fileSystemRpcError(err: FileSystemError): RpcError {
  const code = err.kind === "invalidInput" ? ErrorCode.InvalidRequest : ErrorCode.InternalError;
  return new RpcError(code, err.message, err.errno ? { errno: err.errno } : undefined);
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
 * The `fs/*` method handlers over `fs`. Params are checked before `fs` is
 * touched: a relative path or bad base64 is -32602.
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
  handlers.set(Method.FsReadFile, (params) => {
    const p = paramsObject(params, Method.FsReadFile);
    const path = requireAbsolutePath(p, "path");
    return run(Method.FsReadFile, async () => ({
      dataBase64: encodeBase64(await fs.readFile(path)),
    }));
  });
  handlers.set(Method.FsWriteFile, (params) => {
    const p = paramsObject(params, Method.FsWriteFile);
    const path = requireAbsolutePath(p, "path");
    const data = requireBase64(p, "dataBase64");
    return run(Method.FsWriteFile, async () => {
      await fs.writeFile(path, data);
      return {};
    });
  });
  handlers.set(Method.FsCreateDirectory, (params) => {
    const p = paramsObject(params, Method.FsCreateDirectory);
    const path = requireAbsolutePath(p, "path");
    const recursive = optionalBoolean(p, "recursive", true);
    return run(Method.FsCreateDirectory, async () => {
      await fs.createDirectory(path, { recursive });
      return {};
    });
  });
  handlers.set(Method.FsGetMetadata, (params) => {
    const p = paramsObject(params, Method.FsGetMetadata);
    const path = requireAbsolutePath(p, "path");
    return run(Method.FsGetMetadata, () => fs.getMetadata(path));
  });
  handlers.set(Method.FsReadDirectory, (params) => {
    const p = paramsObject(params, Method.FsReadDirectory);
    const path = requireAbsolutePath(p, "path");
    return run(Method.FsReadDirectory, async () => ({
      entries: await fs.readDirectory(path),
    }));
  });
  handlers.set(Method.FsRemove, (params) => {
    const p = paramsObject(params, Method.FsRemove);
    const path = requireAbsolutePath(p, "path");
    const recursive = optionalBoolean(p, "recursive", true);
    const force = optionalBoolean(p, "force", true);
    return run(Method.FsRemove, async () => {
      await fs.remove(path, { recursive, force });
      return {};
    });
  });
  handlers.set(Method.FsCopy, (params) => {
    const p = paramsObject(params, Method.FsCopy);
    const sourcePath = requireAbsolutePath(p, "sourcePath");
    const destinationPath = requireAbsolutePath(p, "destinationPath");
    const recursive = optionalBoolean(p, "recursive", false);
    return run(Method.FsCopy, async () => {
      await fs.copy(sourcePath, destinationPath, { recursive });
      return {};
    });
  });
  return handlers;
}

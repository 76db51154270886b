/**
 * The `fs/*` methods: untrusted params in, calls on a
 * {@linkcode FileSystem} out, its failures turned into JSON-RPC errors.
 *
 * @module
 */
import { encodeBase64 } from "../protocol/base64.ts";
import { ErrorCode, RpcError } from "../protocol/errors.ts";
import { Requests } from "../protocol/descriptors.ts";
import {
  optionalBoolean,
  paramsObject,
  requireAbsolutePath,
  requireBase64,
} from "../protocol/validate.ts";
import { type FileSystem, FileSystemError } from "../fs/types.ts";
import { toRpcError } from "../runtime/errno.ts";
import { addHandler, type MethodHandler } from "./method_handlers.ts";

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
  addHandler(handlers, Requests.fsReadFile, (params) => {
    const p = paramsObject(params, Requests.fsReadFile.method);
    const path = requireAbsolutePath(p, "path");
    return run(Requests.fsReadFile.method, async () => ({
      dataBase64: encodeBase64(await fs.readFile(path)),
    }));
  });
  addHandler(handlers, Requests.fsWriteFile, (params) => {
    const p = paramsObject(params, Requests.fsWriteFile.method);
    const path = requireAbsolutePath(p, "path");
    const data = requireBase64(p, "dataBase64");
    return run(Requests.fsWriteFile.method, async () => {
      await fs.writeFile(path, data);
      return {};
    });
  });
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

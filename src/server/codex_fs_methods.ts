/**
 * The `fs/*` methods in the Codex CLI's dialect: v0's handlers with that
 * dialect's errors (a missing path is -32004, reading a directory is
 * -32600 "is not a file"), richer metadata, `fs/canonicalize`,
 * `fs/watchMissing` and `fs/walk`. A request that carries a sandbox is checked against
 * it before anything is touched (./fs_sandbox.ts).
 *
 * @module
 */
import { pathToFileURL } from "node:url";
import { CodexRequests, NOT_FOUND_CODE } from "../protocol/codex.ts";
import { Requests } from "../protocol/descriptors.ts";
import process from "node:process";
import { checkCodexSandbox, resolveCodexSandbox } from "../protocol/codex_sandbox.ts";
import { ErrorCode, RpcError } from "../protocol/errors.ts";
import type { SandboxPolicy } from "../protocol/sandbox_policy.ts";
import { paramsObject, requireAbsolutePath } from "../protocol/validate.ts";
import type { LocalFileSystem } from "../fs/local.ts";
import { FileSystemError } from "../fs/types.ts";
import { fileSystemRpcError, fsMethods } from "./fs_methods.ts";
import { sandboxGate } from "./fs_sandbox.ts";
import type { MethodHandler } from "./method_handlers.ts";
import type { MissingWatches } from "./missing_watch.ts";
import { walkHandler } from "./walk_methods.ts";
import { FsWalk } from "../protocol/walk.ts";

/** A filesystem failure as v0 would answer it (wrap() then translates it). */
function fsError(err: unknown): unknown {
  return err instanceof FileSystemError ? fileSystemRpcError(err) : err;
}

function errnoOf(err: RpcError): string | undefined {
  return (err.data as { errno?: string } | undefined)?.errno;
}

/** v0's error, in this dialect's terms. */
function codexError(err: unknown, method: string, params: unknown): unknown {
  if (!(err instanceof RpcError)) return err;
  const errno = errnoOf(err);
  if (errno === "ENOENT") return new RpcError(NOT_FOUND_CODE, err.message, err.data);
  if (errno === "EISDIR" && method === Requests.fsReadFile.method) {
    const path = (params as { path?: unknown }).path;
    return new RpcError(ErrorCode.InvalidRequest, `path \`${path}\` is not a file`, err.data);
  }
  return err;
}

/** The CLI's sandbox member, resolved with the server's `TMPDIR`. */
export function readCodexSandbox(value: unknown): SandboxPolicy | null {
  const sandbox = checkCodexSandbox(value);
  return sandbox ? resolveCodexSandbox(sandbox, process.env.TMPDIR) : null;
}

/** Wrap a v0 handler with the sandbox gate and this dialect's errors. */
function wrap(method: string, handler: MethodHandler): MethodHandler {
  const gated = sandboxGate(method, handler, readCodexSandbox);
  return async (params) => {
    try {
      return await gated(params);
    } catch (err) {
      throw codexError(err, method, params);
    }
  };
}

/** The `fs/*` handlers of a Codex-dialect session. */
export function codexFsMethods(
  fs: LocalFileSystem,
  watches: MissingWatches,
): Map<string, MethodHandler> {
  const handlers = new Map<string, MethodHandler>();
  for (const [method, handler] of fsMethods(fs)) handlers.set(method, wrap(method, handler));
  handlers.set(
    Requests.fsGetMetadata.method,
    wrap(Requests.fsGetMetadata.method, async (params) => {
      const path = requireAbsolutePath(paramsObject(params, "fs/getMetadata"), "path");
      const [metadata, details] = await Promise.all([
        fs.getMetadata(path),
        fs.linkDetails(path),
      ]).catch((err) => {
        throw fsError(err);
      });
      return { ...metadata, ...details };
    }),
  );
  handlers.set(
    CodexRequests.fsCanonicalize.method,
    wrap(CodexRequests.fsCanonicalize.method, async (params) => {
      const path = requireAbsolutePath(paramsObject(params, "fs/canonicalize"), "path");
      const real = await fs.canonicalize(path).catch((err) => {
        throw fsError(err);
      });
      return { path: pathToFileURL(real).href };
    }),
  );
  handlers.set(
    CodexRequests.fsWatchMissing.method,
    wrap(CodexRequests.fsWatchMissing.method, (params) => {
      const p = paramsObject(params, "fs/watchMissing");
      const watchId = p.watchId;
      if (typeof watchId !== "string" && typeof watchId !== "number") {
        throw new RpcError(ErrorCode.InvalidParams, "watchId must be a string or a number");
      }
      const list = (value: unknown, name: string): string[] => {
        if (value === undefined || value === null) return [];
        const items = typeof value === "string" ? [value] : value;
        if (!Array.isArray(items)) {
          throw new RpcError(
            ErrorCode.InvalidParams,
            `${name} must be a path or an array of paths`,
          );
        }
        return items.map((m, i) => requireAbsolutePath({ [`${name}[${i}]`]: m }, `${name}[${i}]`));
      };
      watches.watch(watchId, list(p.missing, "missing"), list(p.present, "present"));
      return { watching: true };
    }),
  );
  handlers.set(
    FsWalk.method,
    wrap(FsWalk.method, walkHandler({ strict: true, uris: true, readSandbox: readCodexSandbox })),
  );
  return handlers;
}

/**
 * The `fs/*` methods in the Codex CLI's dialect: v0's handlers with that
 * dialect's errors (a missing path is -32004, reading a directory is
 * -32600 "is not a file"), richer metadata, `fs/canonicalize`,
 * `fs/watchMissing` and `fs/walk`. A request that carries a sandbox is checked against
 * it before anything is touched (./fs_sandbox.ts).
 *
 * @module
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CodexRequests, NOT_FOUND_CODE } from "../protocol/codex.ts";
import { Requests } from "../protocol/descriptors.ts";
import process from "node:process";
import { checkCodexSandbox, resolveCodexSandbox } from "../protocol/codex_sandbox.ts";
import { ErrorCode, invalidParams, RpcError } from "../protocol/errors.ts";
import { show } from "../protocol/show.ts";
import type { SandboxPolicy } from "../protocol/sandbox_policy.ts";
import { absolutePath, paramsObject, requireAbsolutePath } from "../protocol/validate.ts";
import type { LocalFileSystem } from "../fs/local.ts";
import { type DirectoryEntry, FileSystemError } from "../fs/types.ts";
import { noFollowStep } from "./codex_no_follow.ts";
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

/** The request's `path` as a filesystem path, as upstream names it in messages. */
function shownPath(params: unknown): unknown {
  const path = (params as { path?: unknown }).path;
  try {
    return typeof path === "string" ? absolutePath(path, "path") : path;
  } catch {
    return path;
  }
}

/** v0's error, in this dialect's terms. */
function codexError(err: unknown, method: string, params: unknown): unknown {
  if (!(err instanceof RpcError)) return err;
  // Upstream refuses bad `dataBase64` of fs/writeFile as a bad request (-32600),
  // where v0's check (protocol/validate.ts requireBase64) says -32602.
  if (
    method === Requests.fsWriteFile.method && err.code === ErrorCode.InvalidParams &&
    err.message.startsWith("dataBase64: invalid base64")
  ) {
    return new RpcError(ErrorCode.InvalidRequest, `fs/writeFile requires valid ${err.message}`);
  }
  const errno = errnoOf(err);
  if (errno === "ENOENT") return new RpcError(NOT_FOUND_CODE, err.message, err.data);
  if (errno === "EISDIR" && method === Requests.fsReadFile.method) {
    const path = shownPath(params);
    return new RpcError(ErrorCode.InvalidRequest, `path \`${path}\` is not a file`, err.data);
  }
  return err;
}

/** The CLI's sandbox member, resolved with the server's `TMPDIR`. */
export function readCodexSandbox(value: unknown): SandboxPolicy | null {
  const sandbox = checkCodexSandbox(value);
  return sandbox ? resolveCodexSandbox(sandbox, process.env.TMPDIR) : null;
}

/**
 * Wrap a v0 handler with the `followSymlinks: false` checks
 * (./codex_no_follow.ts), the sandbox gate and this dialect's errors.
 */
function wrap(method: string, handler: MethodHandler): MethodHandler {
  const gated = sandboxGate(method, handler, readCodexSandbox);
  return async (params) => {
    try {
      return await gated(await noFollowStep(method, params));
    } catch (err) {
      throw codexError(fsError(err), method, params);
    }
  };
}

/** Above the largest `watchId` (upstream's is a `u64`; `2 ** 64 - 1` is no double). */
const WATCH_ID_LIMIT = 2 ** 64;

/**
 * The params of `fs/watchMissing`, typed as upstream types them: `watchId`
 * a non-negative integer, `missing` an array of paths (required), `present`
 * one path or null; anything else is -32602.
 */
function watchParams(
  params: unknown,
): { watchId: number; missing: string[]; present: string | null } {
  const p = paramsObject(params, CodexRequests.fsWatchMissing.method);
  const watchId = p.watchId;
  if (
    typeof watchId !== "number" || !Number.isInteger(watchId) || watchId < 0 ||
    watchId >= WATCH_ID_LIMIT
  ) {
    throw invalidParams(`watchId must be a non-negative integer, got ${show(watchId)}`);
  }
  if (!Array.isArray(p.missing)) {
    throw invalidParams(`missing must be an array of paths, got ${show(p.missing)}`);
  }
  const missing = p.missing.map((m, i) => {
    const field = `missing[${i}]`;
    return requireAbsolutePath({ [field]: m }, field);
  });
  const present = p.present === undefined || p.present === null
    ? null
    : requireAbsolutePath(p, "present");
  return { watchId, missing, present };
}

/**
 * `fs/readDirectory` as upstream lists a directory: an entry whose target
 * cannot be reached (a dangling or looping symlink) is left out; a fifo or
 * a socket is listed, as neither file nor directory.
 */
function reachableEntries(fs: LocalFileSystem, v0: MethodHandler): MethodHandler {
  return async (params) => {
    const result = await v0(params) as { entries: DirectoryEntry[] };
    const dir = requireAbsolutePath(paramsObject(params, "fs/readDirectory"), "path");
    const kept = await Promise.all(result.entries.map((e) =>
      e.isDirectory || e.isFile ||
      fs.getMetadata(join(dir, e.fileName)).then(() => true, () => false)
    ));
    return { ...result, entries: result.entries.filter((_, i) => kept[i]) };
  };
}

/** The `fs/*` handlers of a Codex-dialect session. */
export function codexFsMethods(
  fs: LocalFileSystem,
  watches: MissingWatches,
): Map<string, MethodHandler> {
  const handlers = new Map<string, MethodHandler>();
  for (const [method, handler] of fsMethods(fs)) {
    const codex = method === Requests.fsReadDirectory.method
      ? reachableEntries(fs, handler)
      : handler;
    handlers.set(method, wrap(method, codex));
  }
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
    wrap(CodexRequests.fsWatchMissing.method, async (params) => {
      const { watchId, missing, present } = watchParams(params);
      return { watching: await watches.watch(watchId, missing, present) };
    }),
  );
  handlers.set(
    FsWalk.method,
    wrap(FsWalk.method, walkHandler({ strict: true, uris: true, readSandbox: readCodexSandbox })),
  );
  return handlers;
}

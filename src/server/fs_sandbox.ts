/**
 * The sandbox gate of the `fs/*` methods: a call that carries a sandbox is
 * checked against it (see ../fs/sandbox_check.ts) before its handler runs.
 * Each dialect reads its own form of the sandbox; what a method needs at
 * which path is said once, here.
 *
 * @module
 */
import { CodexRequests } from "../protocol/codex.ts";
import { Requests } from "../protocol/descriptors.ts";
import { FsWalk } from "../protocol/walk.ts";
import { FileHandleRequests } from "../protocol/file_handles.ts";
import type { SandboxPolicy } from "../protocol/sandbox_policy.ts";
import { paramsObject } from "../protocol/validate.ts";
import { absolutePath } from "../protocol/validate.ts";
import { type AccessNeed, checkAccess, realPolicy } from "../fs/sandbox_check.ts";
import { SandboxDeniedError } from "../fs/sandbox_check.ts";
import { invalidRequest } from "../protocol/errors.ts";
import type { MethodHandler } from "./method_handlers.ts";

/** Reads a request's `sandbox` member: null when it asks for none. */
export type SandboxReader = (value: unknown) => SandboxPolicy | null;

type NeedsOf = (p: Record<string, unknown>) => AccessNeed[];

const at = (p: Record<string, unknown>, field: string): string =>
  absolutePath(String(p[field]), field);

const read = (path: string, tree = false): AccessNeed => ({
  path,
  needed: "read",
  followFinal: true,
  tree,
});
const write = (path: string, followFinal = true, tree = false): AccessNeed => ({
  path,
  needed: "write",
  followFinal,
  tree,
});

/** Where each method reads or writes, from its (already checked) params. */
const NEEDS: Record<string, NeedsOf> = {
  [Requests.fsReadFile.method]: (p) => [read(at(p, "path"))],
  [Requests.fsGetMetadata.method]: (p) => [read(at(p, "path"))],
  [Requests.fsReadDirectory.method]: (p) => [read(at(p, "path"))],
  // The directory itself; what is below it is checked as the walk reads it.
  [FsWalk.method]: (p) => [read(at(p, "path"))],
  [CodexRequests.fsCanonicalize.method]: (p) => [read(at(p, "path"))],
  // Checked once, at the open: a handle reads or replaces that one file.
  [FileHandleRequests.fsOpen.method]: (
    p,
  ) => [p.mode === "replace" ? write(at(p, "path")) : read(at(p, "path"))],
  [Requests.fsWriteFile.method]: (p) => [write(at(p, "path"))],
  [Requests.fsCreateDirectory.method]: (p) => [write(at(p, "path"))],
  // A removal acts on a final symlink itself, and recursively on all below.
  [Requests.fsRemove.method]: (p) => [write(at(p, "path"), false, p.recursive !== false)],
  [Requests.fsCopy.method]: (p) => [
    read(at(p, "sourcePath"), p.recursive === true),
    write(at(p, "destinationPath"), true, true),
  ],
  // Like a removal at the source (the entry itself moves, with all below
  // it) plus a creation at the destination (a symlink there is replaced,
  // not followed, and a directory there is replaced as a whole).
  [Requests.fsRename.method]: (p) => [
    write(at(p, "sourcePath"), false, true),
    write(at(p, "destinationPath"), false, true),
  ],
  [CodexRequests.fsWatchMissing.method]: (p) =>
    [p.missing, p.present].flatMap((list) =>
      (list === undefined || list === null ? [] : [list].flat()).map((v) =>
        read(absolutePath(String(v), "path"))
      )
    ),
};

/**
 * `handler` behind the sandbox gate: when the request carries a sandbox
 * (read by `readSandbox`), every path it touches must be allowed, else it
 * fails with -32600, `data: {errno: "EACCES", sandboxDenied: true, path,
 * realPath}`, and nothing is touched. A bad path is -32602 as without one.
 */
export function sandboxGate(
  method: string,
  handler: MethodHandler,
  readSandbox: SandboxReader,
): MethodHandler {
  const needsOf = NEEDS[method];
  if (!needsOf) return handler;
  return async (params) => {
    const p = paramsObject(params, method);
    const policy = readSandbox(p.sandbox);
    if (policy) {
      const needs = needsOf(p);
      try {
        await checkAccess(await realPolicy(policy), needs);
      } catch (err) {
        if (!(err instanceof SandboxDeniedError)) throw err;
        throw invalidRequest(err.message, {
          errno: "EACCES",
          sandboxDenied: true,
          path: err.path,
          realPath: err.realPath,
        });
      }
    }
    return await handler(params);
  };
}

/** Every handler of `handlers` behind {@linkcode sandboxGate}. */
export function withSandboxGate(
  handlers: Map<string, MethodHandler>,
  readSandbox: SandboxReader,
): Map<string, MethodHandler> {
  const gated = new Map<string, MethodHandler>();
  for (const [method, handler] of handlers) {
    gated.set(method, sandboxGate(method, handler, readSandbox));
  }
  return gated;
}

/**
 * `fs/walk` in both dialects (see ../protocol/walk.ts): params checked as
 * each dialect wants them, the walk of ../fs/walk.ts, and under a sandbox
 * a walk that reads no directory the sandbox does not let it read (a
 * followed symlink may lead anywhere).
 *
 * @module
 */
import { pathToFileURL } from "node:url";
import { FileSystemError } from "../fs/types.ts";
import { realPolicy } from "../fs/sandbox_check.ts";
import { type ReadGate, walkPlan, walkTree } from "../fs/walk.ts";
import { accessAt, allows } from "../protocol/sandbox_policy.ts";
import { checkWalkOptions, FsWalk, type WalkResult } from "../protocol/walk.ts";
import { paramsObject, requireAbsolutePath } from "../protocol/validate.ts";
import { fileSystemRpcError } from "./fs_methods.ts";
import type { SandboxReader } from "./fs_sandbox.ts";
import type { MethodHandler } from "./method_handlers.ts";

/** How a dialect speaks `fs/walk`. */
export interface WalkDialect {
  /** Every option required (the Codex dialect), or defaults for the missing. */
  strict: boolean;
  /** Entry and error paths as `file://` URIs (the Codex dialect), or as plain paths. */
  uris: boolean;
  /** Reads the request's `sandbox` member. */
  readSandbox: SandboxReader;
}

/**
 * A gate that lets a walk read only where the request's sandbox allows
 * reading, or undefined for a request without one.
 */
export async function readGateOf(
  sandbox: unknown,
  read: SandboxReader,
): Promise<ReadGate | undefined> {
  const policy = read(sandbox);
  if (!policy) return undefined;
  const real = await realPolicy(policy);
  return (path) => allows(accessAt(real, path), "read");
}

/** The answer in the dialect's form. */
function shaped(result: WalkResult, uris: boolean): WalkResult {
  if (!uris) return result;
  const uri = (path: string) => pathToFileURL(path).href;
  return {
    entries: result.entries.map((e) => ({ path: uri(e.path), kind: e.kind })),
    errors: result.errors.map((e) => ({ path: uri(e.path), message: e.message })),
    truncated: result.truncated,
  };
}

/**
 * The `fs/walk` handler of a dialect. Behind the sandbox gate (which checks
 * that the walked directory itself may be read), so the sandbox member has
 * been checked already when this runs.
 *
 * @example
 * ```ts
 * import { walkHandler } from "./walk_methods.ts";
 * import { checkSandboxParams } from "../protocol/sandbox_params.ts";
 * const walk = walkHandler({ strict: false, uris: false, readSandbox: checkSandboxParams });
 * await walk({ path: "/etc", options: { maxDepth: 0 } }); // { entries: [...], errors: [], truncated: false }
 * ```
 */
export function walkHandler(dialect: WalkDialect): MethodHandler {
  return async (params) => {
    const p = paramsObject(params, FsWalk.method);
    const path = requireAbsolutePath(p, "path");
    const options = checkWalkOptions(p.options, dialect.strict);
    try {
      const plan = walkPlan("walk", path, options);
      const result = await walkTree(path, plan, await readGateOf(p.sandbox, dialect.readSandbox));
      return shaped(result, dialect.uris);
    } catch (err) {
      throw err instanceof FileSystemError ? fileSystemRpcError(err) : err;
    }
  };
}

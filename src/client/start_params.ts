/**
 * The `process/start` params of a spawn, with the sandbox as each dialect
 * carries it: this project's `{mode: "restricted", ...}` as is, or the
 * Codex CLI's permission object for a client in session mode (which speaks
 * that dialect).
 *
 * @module
 */
import { pathToFileURL } from "node:url";
import type { ProcessStartParams, SandboxParams } from "../protocol/methods.ts";
import type { SandboxPolicy } from "../protocol/sandbox_policy.ts";
import type { ResolvedSpawnOptions } from "./spawn_options.ts";

/**
 * The Codex dialect's `sandbox` object for a checked permission set: one
 * `path` entry per rule, as `file://` URIs.
 *
 * @example
 * ```ts
 * import { codexSandboxParams } from "./start_params.ts";
 * codexSandboxParams({ rules: [{ path: "/", access: "read" }], network: false });
 * // { permissions: { type: "managed", file_system: { type: "restricted", entries: [
 * //   { path: { type: "path", path: "file:///" }, access: "read" }] }, network: "restricted" } }
 * ```
 */
export function codexSandboxParams(policy: SandboxPolicy): Record<string, unknown> {
  return {
    permissions: {
      type: "managed",
      file_system: {
        type: "restricted",
        entries: policy.rules.map((r) => ({
          path: { type: "path", path: pathToFileURL(r.path).href },
          access: r.access,
        })),
      },
      network: policy.network ? "enabled" : "restricted",
    },
  };
}

/**
 * The `process/start` params for resolved spawn options, in the given
 * dialect (only the sandbox differs); optional members only when set.
 */
export function startParams(
  processId: string,
  o: ResolvedSpawnOptions,
  dialect: "v0" | "codex",
): ProcessStartParams {
  const params: ProcessStartParams = {
    processId,
    argv: o.argv,
    cwd: o.cwd,
    env: o.env,
    tty: o.tty,
  };
  if (o.arg0 !== null) params.arg0 = o.arg0;
  if (o.pipeStdin) params.pipeStdin = true;
  if (o.size) params.size = o.size;
  if (o.sandbox && o.sandboxPolicy) {
    params.sandbox = dialect === "codex"
      ? codexSandboxParams(o.sandboxPolicy) as unknown as SandboxParams
      : o.sandbox;
  }
  return params;
}

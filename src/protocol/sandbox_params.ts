/**
 * The `sandbox` member of exec-server.v0 requests: absent, null or
 * `{"mode":"none"}` for none, or **[ext]** `{"mode":"restricted", read,
 * write, deny, network}` for a permission set given as plain paths.
 *
 * @module
 */
import { invalidParams, invalidRequest } from "./errors.ts";
import type { SandboxPolicy, SandboxRule } from "./sandbox_policy.ts";
export type { RestrictedSandboxParams, SandboxParams } from "./methods.ts";
import { MAX_SANDBOX_RULES, sandboxPathList } from "./sandbox_policy.ts";
import { show } from "./show.ts";

const FIELDS = new Set(["mode", "read", "write", "deny", "network"]);

/**
 * Read a v0 `sandbox` member: null for none, else the permission set.
 *
 * @example
 * ```ts
 * import { checkSandboxParams } from "./sandbox_params.ts";
 * checkSandboxParams({ mode: "restricted", write: ["/work"] });
 * // { rules: [{ path: "/", access: "read" }, { path: "/work", access: "write" }], network: false }
 * checkSandboxParams({ mode: "none" }); // null
 * ```
 * @throws {RpcError} -32602 naming a bad field; -32600 for an unknown mode
 */
export function checkSandboxParams(value: unknown, field = "sandbox"): SandboxPolicy | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalidParams(`${field} must be an object or null, got ${show(value)}`);
  }
  const s = value as Record<string, unknown>;
  if (s.mode === "none") return null;
  if (s.mode !== "restricted") {
    throw invalidRequest(
      `unsupported sandbox mode ${show(s.mode)}: "none" and "restricted" are supported`,
    );
  }
  for (const key of Object.keys(s)) {
    if (!FIELDS.has(key)) throw invalidParams(`${field}.${key} is not a sandbox field`);
  }
  if (s.network !== undefined && typeof s.network !== "boolean") {
    throw invalidParams(`${field}.network must be a boolean, got ${show(s.network)}`);
  }
  const rules: SandboxRule[] = [
    ...(s.read === undefined ? ["/"] : sandboxPathList(s.read, `${field}.read`))
      .map((path) => ({ path, access: "read" as const })),
    ...sandboxPathList(s.write, `${field}.write`).map((path) => ({
      path,
      access: "write" as const,
    })),
    ...sandboxPathList(s.deny, `${field}.deny`).map((path) => ({ path, access: "deny" as const })),
  ];
  if (rules.length > MAX_SANDBOX_RULES) {
    throw invalidParams(`${field} has ${rules.length} paths; at most ${MAX_SANDBOX_RULES}`);
  }
  return { rules, network: s.network === true };
}

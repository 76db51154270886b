/**
 * The Codex CLI's `sandbox` object (on `process/start` and every `fs/*`
 * call), read strictly and resolved to a {@linkcode SandboxPolicy}. Anything
 * this server cannot enforce exactly is refused, never approximated: a
 * sandbox that was asked for is enforced or the request fails.
 *
 * @module
 */
import { invalidParams, invalidRequest } from "./errors.ts";
import type { SandboxAccess, SandboxPolicy, SandboxRule } from "./sandbox_policy.ts";
import { MAX_SANDBOX_RULES, sandboxPath, sandboxPathList } from "./sandbox_policy.ts";
import { show } from "./show.ts";

/** One filesystem entry before its special path is resolved. */
type Target =
  | { kind: "path"; path: string }
  | { kind: "root" | "minimal" | "tmpdir" | "slash_tmp" }
  | { kind: "project_roots"; subpath: string | null };

/** A checked Codex sandbox, waiting for the context that resolves it. */
export interface CodexSandbox {
  /** The entries, or `null` for an unrestricted filesystem. */
  entries: { target: Target; access: SandboxAccess }[] | null;
  /** Whether the network is enabled. */
  network: boolean;
  /** The project roots (`workspaceRoots`, else `cwd`), as absolute paths. */
  projectRoots: string[];
  /** `temporaryDirectories`, when the CLI named them. */
  temporaryDirectories: string[];
}

/**
 * What the system needs to run programs, read-only, for the `minimal`
 * special path: binaries, libraries and `/etc` (users, locale, certificates).
 */
export const MINIMAL_READ_PATHS: readonly string[] = Object.freeze([
  "/bin",
  "/sbin",
  "/usr",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
]);

/** Fields the CLI sends that do not change what a process may do here. */
const TOP_FIELDS = new Set([
  "permissions",
  "cwd",
  "workspaceRoots",
  "userHomeDir",
  "temporaryDirectories",
  "policyContext",
  "windowsSandboxLevel",
  "windowsSandboxProxySettingsMode",
  "useLegacyLandlock",
]);

function object(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidParams(`${field} must be an object, got ${show(value)}`);
  }
  return value as Record<string, unknown>;
}

function onlyFields(obj: Record<string, unknown>, field: string, allowed: string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) throw invalidParams(`${field}.${key} is not a known field`);
  }
}

function network(value: unknown, field: string): boolean {
  if (value === "enabled") return true;
  if (value === "restricted") return false;
  throw invalidParams(`${field} must be "restricted" or "enabled", got ${show(value)}`);
}

function subpath(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value === "" || value.startsWith("/")) {
    throw invalidParams(`${field} must be a relative path, got ${show(value)}`);
  }
  // Checked as if absolute, so NUL, "." and ".." are refused alike.
  return sandboxPath("/" + value, field).slice(1);
}

function target(value: unknown, field: string): Target {
  const p = object(value, field);
  if (p.type === "path") {
    onlyFields(p, field, ["type", "path"]);
    return { kind: "path", path: sandboxPath(p.path, `${field}.path`) };
  }
  if (p.type === "glob_pattern") {
    throw invalidRequest(`${field}: glob_pattern entries are not supported by this server`);
  }
  if (p.type !== "special") {
    throw invalidParams(`${field}.type must be "path" or "special", got ${show(p.type)}`);
  }
  onlyFields(p, field, ["type", "value"]);
  const v = object(p.value, `${field}.value`);
  const kind = v.kind === "current_working_directory" ? "project_roots" : v.kind;
  if (kind === "project_roots") {
    onlyFields(v, `${field}.value`, ["kind", "subpath"]);
    return { kind, subpath: subpath(v.subpath, `${field}.value.subpath`) };
  }
  if (kind === "root" || kind === "minimal" || kind === "tmpdir" || kind === "slash_tmp") {
    onlyFields(v, `${field}.value`, ["kind"]);
    return { kind };
  }
  throw invalidParams(`${field}.value.kind ${show(v.kind)} is not a known special path`);
}

function entry(value: unknown, field: string): { target: Target; access: SandboxAccess } {
  const e = object(value, field);
  onlyFields(e, field, ["path", "access", "missing_path_behavior"]);
  const access = e.access === "none" ? "deny" : e.access;
  if (access !== "read" && access !== "write" && access !== "deny") {
    throw invalidParams(`${field}.access must be "read", "write" or "deny", got ${show(e.access)}`);
  }
  const missing = e.missing_path_behavior;
  if (missing !== undefined && missing !== null && missing !== "skip") {
    throw invalidParams(`${field}.missing_path_behavior must be "skip", got ${show(missing)}`);
  }
  return { target: target(e.path, `${field}.path`), access };
}

function fileSystem(value: unknown, field: string): CodexSandbox["entries"] {
  const fs = object(value, field);
  if (fs.type === "unrestricted") {
    onlyFields(fs, field, ["type"]);
    return null;
  }
  if (fs.type !== "restricted") {
    throw invalidParams(
      `${field}.type must be "restricted" or "unrestricted", got ${show(fs.type)}`,
    );
  }
  onlyFields(fs, field, ["type", "entries", "glob_scan_max_depth"]);
  if (!Array.isArray(fs.entries)) {
    throw invalidParams(`${field}.entries must be an array, got ${show(fs.entries)}`);
  }
  if (fs.entries.length > MAX_SANDBOX_RULES) {
    throw invalidParams(
      `${field}.entries has ${fs.entries.length} entries; at most ${MAX_SANDBOX_RULES}`,
    );
  }
  return fs.entries.map((e, i) => entry(e, `${field}.entries[${i}]`));
}

/**
 * Read the CLI's `sandbox` member: null when it asks for none (absent,
 * null, or permissions of type `disabled`).
 *
 * @throws {RpcError} -32602 naming the bad field; -32600 for what cannot be enforced
 */
export function checkCodexSandbox(value: unknown, field = "sandbox"): CodexSandbox | null {
  if (value === undefined || value === null) return null;
  const s = object(value, field);
  for (const key of Object.keys(s)) {
    if (!TOP_FIELDS.has(key)) throw invalidParams(`${field}.${key} is not a known field`);
  }
  const perms = object(s.permissions, `${field}.permissions`);
  const pf = `${field}.permissions`;
  if (perms.type === "disabled") return null;
  let entries: CodexSandbox["entries"];
  if (perms.type === "managed") {
    onlyFields(perms, pf, ["type", "file_system", "network"]);
    entries = fileSystem(perms.file_system, `${pf}.file_system`);
  } else if (perms.type === "external") {
    // The CLI runs inside a sandbox of its own; the network rule is still ours to keep.
    onlyFields(perms, pf, ["type", "network"]);
    entries = null;
  } else {
    throw invalidParams(
      `${pf}.type must be "managed", "external" or "disabled", got ${show(perms.type)}`,
    );
  }
  const roots = sandboxPathList(s.workspaceRoots, `${field}.workspaceRoots`);
  const cwd = s.cwd === undefined || s.cwd === null ? [] : [sandboxPath(s.cwd, `${field}.cwd`)];
  return {
    entries,
    network: network(perms.network, `${pf}.network`),
    projectRoots: roots.length > 0 ? roots : cwd,
    temporaryDirectories: sandboxPathList(
      s.temporaryDirectories,
      `${field}.temporaryDirectories`,
    ),
  };
}

/**
 * Resolve a checked sandbox to rules. `tmpdir` is the `TMPDIR` of the
 * process (or of the server, for file calls), used for the `tmpdir` special
 * path when the CLI named no `temporaryDirectories`; without either that
 * entry grants nothing.
 *
 * @throws {RpcError} -32600 when `project_roots` is used and no root is known
 */
export function resolveCodexSandbox(sandbox: CodexSandbox, tmpdir?: string): SandboxPolicy {
  if (sandbox.entries === null) {
    return { rules: [{ path: "/", access: "write" }], network: sandbox.network };
  }
  const rules: SandboxRule[] = [];
  for (const { target, access } of sandbox.entries) {
    for (const path of targetPaths(sandbox, target, tmpdir)) rules.push({ path, access });
  }
  return { rules, network: sandbox.network };
}

function targetPaths(sandbox: CodexSandbox, target: Target, tmpdir?: string): string[] {
  switch (target.kind) {
    case "path":
      return [target.path];
    case "root":
      return ["/"];
    case "minimal":
      return [...MINIMAL_READ_PATHS];
    case "slash_tmp":
      return ["/tmp"];
    case "tmpdir": {
      if (sandbox.temporaryDirectories.length > 0) return sandbox.temporaryDirectories;
      if (!tmpdir) return [];
      try {
        return [sandboxPath(tmpdir, "TMPDIR")];
      } catch {
        return [];
      }
    }
    case "project_roots": {
      if (sandbox.projectRoots.length === 0) {
        throw invalidRequest("sandbox uses project_roots but names no workspaceRoots or cwd");
      }
      const sub = target.subpath;
      return sandbox.projectRoots.map((root) =>
        sub === null ? root : root === "/" ? `/${sub}` : `${root}/${sub}`
      );
    }
  }
}

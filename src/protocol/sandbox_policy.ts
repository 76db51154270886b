/**
 * The permission set a sandboxed process or file call runs under, once
 * every dialect's way of asking for one has been resolved to absolute
 * paths: rules of `read`, `write` or `deny` on paths, and whether the
 * network is reachable. One pure rule decides the access at any path, so
 * the bubblewrap mounts of a process and the server's checks of `fs/*`
 * calls can never disagree.
 *
 * @module
 */
import { invalidParams } from "./errors.ts";
import { parsePath } from "./paths.ts";
import { show } from "./show.ts";

/** What a rule allows: `read` (and run), `write` (and read), or nothing. */
export type SandboxAccess = "read" | "write" | "deny";

/** One rule: the access to a path and everything below it. */
export interface SandboxRule {
  /** Absolute, normalized path (no `.`, `..`, `//` or trailing `/`). */
  path: string;
  /** What is allowed there. */
  access: SandboxAccess;
}

/** A resolved permission set. */
export interface SandboxPolicy {
  /** The rules; a path under none of them is denied. */
  rules: SandboxRule[];
  /** Whether the network is reachable (false: only a private loopback). */
  network: boolean;
}

/** The most rules a sandbox may carry; more is refused rather than slow. */
export const MAX_SANDBOX_RULES = 256;

/** Conflict order for two rules on the same path: the stricter wins. */
const STRICTNESS: Record<SandboxAccess, number> = { read: 0, write: 1, deny: 2 };

/**
 * Check `value` as an absolute path for a sandbox rule: a path or a
 * `file://` URI, no NUL, no `.` or `..` segment (a rule must name one place
 * by its letters); returns it normalized.
 *
 * @throws {RpcError} -32602 naming `field`
 */
export function sandboxPath(value: unknown, field: string): string {
  if (typeof value !== "string") {
    throw invalidParams(`${field} must be an absolute path, got ${show(value)}`);
  }
  const parsed = parsePath(value);
  if (!parsed.ok) throw invalidParams(`${field} ${parsed.reason}`);
  // URL parsing resolves "." and ".." by their letters, so look before it did.
  const written = parsed.isUri ? uriPathAsWritten(value) : parsed.path;
  if (written.split("/").some((s) => s === "." || s === "..")) {
    throw invalidParams(`${field} must not contain "." or ".." segments, got ${show(value)}`);
  }
  return "/" + parsed.path.split("/").filter((s) => s !== "").join("/");
}

/** The path of a `file:` URI as written: after the scheme and host, percent-decoded. */
function uriPathAsWritten(uri: string): string {
  const path = uri.replace(/^file:(\/\/[^/]*)?/i, "");
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** Whether `path` is `base` or lies below it (both normalized). */
export function isWithin(path: string, base: string): boolean {
  if (base === "/") return true;
  return path === base || path.startsWith(base + "/");
}

/**
 * The access at `path` (absolute, normalized): that of the most specific
 * rule at or above it; of two rules on the same path the stricter
 * (`deny` over `write` over `read`); `deny` where no rule applies.
 *
 * @example
 * ```ts
 * import { accessAt } from "./sandbox_policy.ts";
 * const policy = {
 *   rules: [
 *     { path: "/", access: "read" as const },
 *     { path: "/work", access: "write" as const },
 *     { path: "/work/.git", access: "read" as const },
 *   ],
 *   network: false,
 * };
 * accessAt(policy, "/work/src/a.ts"); // "write"
 * accessAt(policy, "/work/.git/config"); // "read"
 * ```
 */
export function accessAt(policy: SandboxPolicy, path: string): SandboxAccess {
  let best: SandboxRule | undefined;
  for (const rule of policy.rules) {
    if (!isWithin(path, rule.path)) continue;
    if (
      !best || rule.path.length > best.path.length ||
      (rule.path.length === best.path.length && STRICTNESS[rule.access] > STRICTNESS[best.access])
    ) best = rule;
  }
  return best?.access ?? "deny";
}

/** Whether `access` includes `needed`. */
export function allows(access: SandboxAccess, needed: "read" | "write"): boolean {
  return needed === "read" ? access !== "deny" : access === "write";
}

/**
 * The first rule strictly below `path` that grants less than `needed`, if
 * any: a recursive removal or copy of `path` must not reach into it.
 */
export function narrowerRuleBelow(
  policy: SandboxPolicy,
  path: string,
  needed: "read" | "write",
): SandboxRule | undefined {
  return policy.rules.find((r) =>
    r.path !== path && isWithin(r.path, path) && !allows(accessAt(policy, r.path), needed)
  );
}

/**
 * The rules in the order their mounts must be made: shorter paths first,
 * so a narrower rule's mount lands on top of a wider one; one rule per
 * path (the one {@linkcode accessAt} picks).
 */
export function mountOrder(policy: SandboxPolicy): SandboxRule[] {
  const byPath = new Map<string, SandboxRule>();
  for (const rule of policy.rules) {
    const seen = byPath.get(rule.path);
    if (!seen || STRICTNESS[rule.access] > STRICTNESS[seen.access]) byPath.set(rule.path, rule);
  }
  return [...byPath.values()].sort((a, b) =>
    depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

function depth(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}

/**
 * Check a list of paths under `field` (`sandbox.write`): an array of at
 * most {@linkcode MAX_SANDBOX_RULES} absolute paths.
 *
 * @throws {RpcError} -32602 naming the bad element
 */
export function sandboxPathList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw invalidParams(`${field} must be an array of absolute paths, got ${show(value)}`);
  }
  if (value.length > MAX_SANDBOX_RULES) {
    throw invalidParams(
      `${field} has ${value.length} entries; at most ${MAX_SANDBOX_RULES} are accepted`,
    );
  }
  return value.map((item, i) => sandboxPath(item, `${field}[${i}]`));
}

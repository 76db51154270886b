/**
 * File operations checked against a sandbox's permission set before they
 * touch the disk. Both the rules and the target are compared as real paths
 * (symlinks resolved; for a path that does not exist yet, its deepest
 * existing ancestor), so a symlink inside a writable directory that leads
 * outside cannot be used to write outside.
 *
 * @module
 */
import { readlink, realpath } from "node:fs/promises";
import { posix } from "node:path";
import type { SandboxPolicy } from "../protocol/sandbox_policy.ts";
import { accessAt, allows, narrowerRuleBelow } from "../protocol/sandbox_policy.ts";
import { FileSystemError } from "./types.ts";

/** What one operation needs at one path. */
export interface AccessNeed {
  /** The path as the caller named it (absolute). */
  path: string;
  /** The access needed. */
  needed: "read" | "write";
  /**
   * Whether the operation acts on what a final symlink leads to (reads,
   * writes) rather than on the link itself (removal).
   */
  followFinal: boolean;
  /** Whether it reaches everything below the path too (recursive removal or copy). */
  tree: boolean;
}

/** A file operation the sandbox does not allow; `errno` is EACCES. */
export class SandboxDeniedError extends FileSystemError {
  /** The path with symlinks resolved, which the rules were applied to. */
  readonly realPath: string;
  /** The access that was needed. */
  readonly needed: "read" | "write";

  /** @param need what was asked; @param realPath where it leads; @param detail why not */
  constructor(need: AccessNeed, realPath: string, detail: string) {
    const shown = realPath === need.path ? need.path : `${need.path} (which is ${realPath})`;
    super(
      "invalidInput",
      "EACCES",
      need.path,
      `sandbox denies ${need.needed} access to ${shown}${detail}`,
    );
    this.name = "SandboxDeniedError";
    this.realPath = realPath;
    this.needed = need.needed;
  }
}

/** Symlinks followed by {@linkcode realTarget} before it stops (Linux's own limit). */
const MAX_SYMLINK_HOPS = 40;

/**
 * `path` with every existing symlink resolved: the real path of its deepest
 * existing ancestor, followed by the rest (normalized; it names nothing that
 * exists, so no link is skipped). A dangling symlink is followed to where
 * it points, since writing through it creates that: a link inside a
 * writable directory to a missing file outside is outside. With
 * `followFinal` false a final symlink is kept as itself.
 */
export async function realTarget(
  path: string,
  followFinal = true,
  hops = MAX_SYMLINK_HOPS,
): Promise<string> {
  const normal = posix.normalize(path);
  if (normal === "/") return "/";
  if (followFinal) {
    try {
      return await realpath(normal);
    } catch {
      // Missing, dangling (or unreadable): resolve the parent instead.
    }
  }
  const parent = await realTarget(posix.dirname(normal), true, hops);
  const here = posix.join(parent, posix.basename(normal));
  if (!followFinal || hops <= 0) return here;
  const link = await readlink(here).catch(() => undefined);
  if (link === undefined) return here;
  return await realTarget(posix.resolve(parent, link), true, hops - 1);
}

/** The policy with each rule's path resolved as {@linkcode realTarget} does. */
export async function realPolicy(policy: SandboxPolicy): Promise<SandboxPolicy> {
  const rules = await Promise.all(
    policy.rules.map(async (r) => ({ path: await realTarget(r.path), access: r.access })),
  );
  return { rules, network: policy.network };
}

/**
 * Fail unless `policy` (with real paths, from {@linkcode realPolicy})
 * allows every need.
 *
 * @throws {SandboxDeniedError} for the first need it does not allow
 */
export async function checkAccess(policy: SandboxPolicy, needs: AccessNeed[]): Promise<void> {
  for (const need of needs) {
    const real = await realTarget(need.path, need.followFinal);
    if (!allows(accessAt(policy, real), need.needed)) {
      throw new SandboxDeniedError(need, real, "");
    }
    const inner = need.tree ? narrowerRuleBelow(policy, real, need.needed) : undefined;
    if (inner) {
      throw new SandboxDeniedError(
        need,
        real,
        `: it contains ${inner.path}, which is ${inner.access === "deny" ? "denied" : "read-only"}`,
      );
    }
  }
}

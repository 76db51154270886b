/**
 * Checks a freshly built executable before it replaces the old one: run
 * it where this machine can (natively, or linux-arm64 under qemu), and
 * otherwise check what can be checked without running it (a Mach-O for
 * the right CPU, the SEA blob injected, a valid signature).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { VERSION } from "../../src/version.ts";
import { SEA_FUSE } from "./sea_build.ts";
import { onPath, run } from "./shell.ts";
import { hostTarget, type Target, TARGET_INFO } from "./targets.ts";

/** Mach-O CPU types (`cputype`, little-endian at offset 4). */
const MACHO_CPU: Record<string, number> = { x64: 0x01000007, arm64: 0x0100000c };
/** ELF machines (`e_machine` at offset 18). */
const ELF_MACHINE: Record<string, number> = { x64: 0x3e, arm64: 0xb7 };

/**
 * Check the binary at `path` for `target`.
 *
 * @returns what was checked, for the build's log
 * @throws {Error} when a check fails
 */
export async function checkBuilt(path: string, target: Target): Promise<string> {
  const info = TARGET_INFO[target];
  const bytes = readFileSync(path);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (info.os === "linux") {
    if (view.getUint32(0) !== 0x7f454c46 || view.getUint16(18, true) !== ELF_MACHINE[info.arch]) {
      throw new Error(`${path} is not an ELF executable for ${info.arch}`);
    }
  } else if (
    view.getUint32(0, true) !== 0xfeedfacf || view.getUint32(4, true) !== MACHO_CPU[info.arch]
  ) {
    throw new Error(`${path} is not a 64-bit Mach-O executable for ${info.arch}`);
  }
  // postject flips the fuse's last character to 1 once the blob is in.
  if (!bytes.includes(`${SEA_FUSE}:1`)) throw new Error(`${path} has no SEA blob (fuse not set)`);
  const checks = ["header", "blob"];
  if (info.os === "darwin") {
    const { verifyCodeSignature } = await import("../macho_sign.ts");
    const verdict = verifyCodeSignature(bytes);
    if (!verdict.ok) throw new Error(`${path}: bad signature: ${verdict.problems.join("; ")}`);
    checks.push("signature verified");
  }
  const runner = target === hostTarget()
    ? [path]
    : target === "linux-arm64" && onPath("qemu-aarch64-static")
    ? ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", path]
    : undefined;
  if (runner) {
    const version = run(runner[0], [...runner.slice(1), "--version"], "smoke test").trim();
    if (!version.startsWith(`exec-server ${VERSION} (`)) {
      throw new Error(`${path} --version printed ${JSON.stringify(version)}`);
    }
    checks.push(runner.length > 1 ? "--version under qemu" : "--version");
  }
  const needs = info.os === "linux" ? libcNeeds(path, target) : undefined;
  return `checked: ${checks.join(", ")}${needs ? `; needs ${needs}` : ""}`;
}

/** The newest glibc and libstdc++ symbol versions an ELF file needs. */
function libcNeeds(path: string, target: Target): string | undefined {
  const tool = target === hostTarget() ? "objdump" : "aarch64-linux-gnu-objdump";
  if (!onPath(tool)) return undefined;
  const res = spawnSync(tool, ["-T", path], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (res.status !== 0) return undefined;
  const newest = (prefix: string): string | undefined => {
    const versions = [...res.stdout.matchAll(new RegExp(`\\b${prefix}_(\\d+(?:\\.\\d+)*)`, "g"))]
      .map((m) => m[1].split(".").map(Number))
      .sort((x, y) => x[0] - y[0] || (x[1] ?? 0) - (y[1] ?? 0) || (x[2] ?? 0) - (y[2] ?? 0));
    const last = versions.at(-1);
    return last && `${prefix}_${last.join(".")}`;
  };
  return [newest("GLIBC"), newest("GLIBCXX")].filter(Boolean).join(", ") || undefined;
}

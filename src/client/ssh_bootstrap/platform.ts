/**
 * Which platforms an executable runs on, read from its first bytes, and
 * the names a remote's `uname` gives them. The bootstrap compares the two
 * before uploading, so a binary built for another machine fails with a
 * clear message instead of an `Exec format error` from the remote.
 *
 * @module
 */
import type { BinaryTarget } from "./options.ts";

/** A platform as the remote's `uname -s` and `uname -m` name it, e.g. `Linux`, `x86_64`. */
export interface BinaryPlatform {
  /** The kernel, as `uname -s` prints it: `Linux`, `Darwin`, `FreeBSD`, ... */
  os: string;
  /** The canonical machine name: `x86_64`, `aarch64`, `arm`, `i386`, `riscv64`, ... */
  arch: string;
}

const ELF_MACHINES: Record<number, string> = {
  0x03: "i386",
  0x16: "s390x",
  0x28: "arm",
  0x3e: "x86_64",
  0xb7: "aarch64",
  0xf3: "riscv64",
};
const ELF_OSABI: Record<number, string> = { 2: "NetBSD", 9: "FreeBSD", 12: "OpenBSD" };
const MACHO_CPUS: Record<number, string> = {
  0x7: "i386",
  0x01000007: "x86_64",
  0x0100000c: "aarch64",
};

/**
 * The platforms an executable runs on, from its first bytes: ELF (Linux
 * unless its OS/ABI byte names a BSD), Mach-O and universal Mach-O
 * (`Darwin`), or `"any"` for a `#!` script. Undefined when unknown.
 *
 * @example
 * ```ts
 * import { detectBinaryPlatforms } from "./platform.ts";
 * const elf = new Uint8Array(64);
 * elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1]);
 * elf[18] = 0x3e;
 * detectBinaryPlatforms(elf); // [{ os: "Linux", arch: "x86_64" }]
 * ```
 */
export function detectBinaryPlatforms(
  header: Uint8Array,
): BinaryPlatform[] | "any" | undefined {
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const u32be = (at: number) => header.byteLength >= at + 4 ? view.getUint32(at) : -1;
  if (header[0] === 0x23 && header[1] === 0x21) return "any";
  const magic = u32be(0);
  if (magic === 0x7f454c46 && header.byteLength >= 20) {
    const littleEndian = header[5] === 1;
    let arch = ELF_MACHINES[view.getUint16(18, littleEndian)];
    if (view.getUint16(18, littleEndian) === 0x15) arch = littleEndian ? "ppc64le" : "ppc64";
    if (arch === undefined) return undefined;
    return [{ os: ELF_OSABI[header[7]] ?? "Linux", arch }];
  }
  if ((magic === 0xcffaedfe || magic === 0xcefaedfe) && header.byteLength >= 8) {
    const arch = MACHO_CPUS[view.getUint32(4, true)];
    return arch === undefined ? undefined : [{ os: "Darwin", arch }];
  }
  // 0xcafebabe also opens Java class files, whose "count" is a class-file
  // version far above any real number of slices.
  if (magic === 0xcafebabe) {
    const count = u32be(4);
    if (count < 1 || count > 8 || header.byteLength < 8 + 20 * count) return undefined;
    const platforms: BinaryPlatform[] = [];
    for (let i = 0; i < count; i++) {
      const arch = MACHO_CPUS[view.getUint32(8 + 20 * i)];
      if (arch !== undefined) platforms.push({ os: "Darwin", arch });
    }
    return platforms.length > 0 ? platforms : undefined;
  }
  return undefined;
}

/** Every `uname -m` that a canonical arch runs on. */
const ARCH_ALIASES: Record<string, string[]> = {
  x86_64: ["x86_64", "amd64"],
  aarch64: ["aarch64", "arm64"],
  arm: ["arm", "armv6l", "armv7l", "armv8l"],
  i386: ["i386", "i486", "i586", "i686", "x86"],
};

/**
 * Every `uname -m` a machine with the canonical `arch` may print (the BSDs
 * and macOS say `amd64` or `arm64` where Linux says `x86_64` or `aarch64`).
 *
 * @example
 * ```ts
 * import { unameMachines } from "./platform.ts";
 * unameMachines("aarch64"); // ["aarch64", "arm64"]
 * ```
 */
export function unameMachines(arch: string): string[] {
  return ARCH_ALIASES[arch] ?? [arch];
}

/**
 * `platforms` for a message, e.g. `Linux/x86_64 or Darwin/aarch64`.
 *
 * @example
 * ```ts
 * import { describePlatforms } from "./platform.ts";
 * describePlatforms([{ os: "Linux", arch: "arm" }]); // "Linux/arm"
 * ```
 */
export function describePlatforms(platforms: BinaryPlatform[]): string {
  return platforms.map(({ os, arch }) => `${os}/${arch}`).join(" or ");
}

/** The platform of each target exec-server binaries are built for. */
export const TARGET_PLATFORMS: Readonly<Record<BinaryTarget, BinaryPlatform>> = {
  "linux-x64": { os: "Linux", arch: "x86_64" },
  "linux-arm64": { os: "Linux", arch: "aarch64" },
  "darwin-x64": { os: "Darwin", arch: "x86_64" },
  "darwin-arm64": { os: "Darwin", arch: "aarch64" },
};

/** Whether `name` is one of the {@linkcode BinaryTarget}s. */
export function isBinaryTarget(name: string): name is BinaryTarget {
  return Object.hasOwn(TARGET_PLATFORMS, name);
}

/**
 * The target whose binary runs on `platform`, whose `arch` may be any
 * `uname -m` alias (`arm64` on macOS), or undefined for a platform no
 * target is built for.
 *
 * @example
 * ```ts
 * import { targetOfPlatform } from "./platform.ts";
 * targetOfPlatform({ os: "Darwin", arch: "arm64" }); // "darwin-arm64"
 * ```
 */
export function targetOfPlatform(platform: BinaryPlatform): BinaryTarget | undefined {
  for (const [target, { os, arch }] of Object.entries(TARGET_PLATFORMS)) {
    if (os === platform.os && unameMachines(arch).includes(platform.arch)) {
      return target as BinaryTarget;
    }
  }
  return undefined;
}

/**
 * The binaries a bootstrap offers the remote, from `bootstrap.localBinary`
 * (one) or `bootstrap.binaries` (one per target, as a map or a
 * directory), each with the platforms it runs on. Everything is checked
 * here, before ssh starts: a file whose header contradicts the target it
 * is given for would otherwise only fail on the remote, as an
 * `Exec format error` after a long upload.
 *
 * @module
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { describeLocalBinary, type LocalBinary } from "./cache.ts";
import { BootstrapError } from "./errors.ts";
import type { BinaryTarget, SshBootstrapOptions } from "./options.ts";
import {
  type BinaryPlatform,
  describePlatforms,
  isBinaryTarget,
  TARGET_PLATFORMS,
  targetOfPlatform,
} from "./platform.ts";

/** One binary the remote may choose. */
export interface Candidate {
  /** What events and messages call it: a target, `OS/arch`, or `any`. */
  target: string;
  /** The file, its size and sha256. */
  binary: LocalBinary;
  /** The platforms the remote's `uname` must name for it; undefined: any. */
  platforms: BinaryPlatform[] | undefined;
}

/**
 * The candidates of `boot`, in the order the remote tries them.
 *
 * @throws {TypeError} for options that contradict each other or a file's header
 * @throws {BootstrapError} of kind `local` for a file that cannot be read or told apart
 */
export async function resolveCandidates(
  host: string,
  boot: SshBootstrapOptions,
): Promise<Candidate[]> {
  const single = boot.localBinary !== undefined;
  if (single === (boot.binaries !== undefined)) {
    throw new TypeError(
      `give exactly one of bootstrap.localBinary and bootstrap.binaries, got ${
        single ? "both" : "neither"
      }`,
    );
  }
  if (single) return [await fromLocalBinary(host, boot.localBinary!, boot.platform)];
  if (boot.platform !== undefined) {
    throw new TypeError(
      "bootstrap.platform applies to bootstrap.localBinary only: " +
        "with bootstrap.binaries, each file's target says where it runs",
    );
  }
  const binaries = boot.binaries!;
  if (typeof binaries === "string") return await fromDirectory(host, binaries);
  const entries = Object.entries(binaries).filter(([, path]) => path !== undefined);
  if (entries.length === 0) throw new TypeError("bootstrap.binaries names no binary");
  return await Promise.all(entries.map(([target, path]) => {
    if (!isBinaryTarget(target)) {
      throw new TypeError(
        `bootstrap.binaries: unknown target ${JSON.stringify(target)} ` +
          `(known: ${Object.keys(TARGET_PLATFORMS).join(", ")})`,
      );
    }
    return forTarget(host, target, path!);
  }));
}

/** The one candidate of `localBinary`, its platforms from `platform` or its header. */
async function fromLocalBinary(
  host: string,
  path: string,
  platform: BinaryPlatform | "any" | undefined,
  hint = "pass bootstrap.platform",
): Promise<Candidate> {
  const binary = await describe(host, path);
  if (platform === undefined && binary.platforms === undefined) {
    throw new BootstrapError(
      host,
      "local",
      `cannot tell which platform ${binary.path} is built for (not ELF, Mach-O or a #! script); ` +
        hint,
    );
  }
  const chosen = platform ?? binary.platforms!;
  const platforms = chosen === "any" ? undefined : Array.isArray(chosen) ? chosen : [chosen];
  return { target: label(platforms), binary, platforms };
}

/** A candidate given for `target`, whose header must agree (a `#!` script runs anywhere). */
async function forTarget(host: string, target: BinaryTarget, path: string): Promise<Candidate> {
  const binary = await describe(host, path);
  const wanted = TARGET_PLATFORMS[target];
  const found = binary.platforms;
  const agrees = found === "any" ||
    found?.some((p) => p.os === wanted.os && p.arch === wanted.arch) === true;
  if (!agrees) {
    throw new TypeError(
      `bootstrap.binaries gives ${binary.path} for ${target} (${describePlatforms([wanted])}), ` +
        `but its header says ${
          found === undefined ? "no platform exec-server knows" : describePlatforms(found)
        }`,
    );
  }
  return { target, binary, platforms: [wanted] };
}

/**
 * The files `exec-server-<target>` in `dir`, then a plain `exec-server`
 * there for the platforms of its header; the remote takes the first that
 * matches, so a file named for a target wins over the plain one.
 */
async function fromDirectory(host: string, dir: string): Promise<Candidate[]> {
  const isFile = (path: string) =>
    stat(path).then((st) => st.isFile(), (err: Error & { code?: string }) => {
      if (err.code === "ENOENT") return false;
      throw new BootstrapError(host, "local", `cannot read ${path}: ${err.message}`, {
        cause: err,
      });
    });
  const candidates: Candidate[] = [];
  for (const target of Object.keys(TARGET_PLATFORMS) as BinaryTarget[]) {
    const path = join(dir, `exec-server-${target}`);
    if (await isFile(path)) candidates.push(await forTarget(host, target, path));
  }
  const plain = join(dir, "exec-server");
  if (await isFile(plain)) {
    const known = candidates.map((c) => c.binary.sha256);
    const extra = await fromLocalBinary(
      host,
      plain,
      undefined,
      "rename it exec-server-<target>",
    );
    if (!known.includes(extra.binary.sha256)) candidates.push(extra);
  }
  if (candidates.length === 0) {
    throw new BootstrapError(
      host,
      "local",
      `${dir} holds no binary: neither exec-server-<target> ` +
        `(${Object.keys(TARGET_PLATFORMS).join(", ")}) nor exec-server`,
    );
  }
  return candidates;
}

async function describe(host: string, path: string): Promise<LocalBinary> {
  try {
    return await describeLocalBinary(path);
  } catch (err) {
    throw new BootstrapError(
      host,
      "local",
      `cannot read ${path}: ${err instanceof Error ? err.message : err}`,
      { cause: err },
    );
  }
}

/** The target names of `platforms` (`OS/arch` for one no target covers), or `any`. */
function label(platforms: BinaryPlatform[] | undefined): string {
  if (platforms === undefined) return "any";
  return platforms.map((p) => targetOfPlatform(p) ?? `${p.os}/${p.arch}`).join("+");
}

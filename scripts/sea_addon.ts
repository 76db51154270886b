/**
 * Where the single-executable build puts node-pty's native addon so that
 * `process.dlopen` can load it: the addon travels inside the binary as a SEA
 * asset, but a shared object can only be loaded from a file.
 *
 * The first choice is a per-user cache (`$XDG_CACHE_HOME/exec-server/` or
 * `~/.cache/exec-server/`) under a directory named for the version and the
 * addon's checksum, so that later starts skip the write and two versions
 * never share a file. When that cannot be used (read-only or missing home,
 * a directory someone else owns, a `noexec` mount) a private temporary
 * directory is used instead and removed as soon as the addon is loaded.
 *
 * @module
 */
import type { Buffer } from "node:buffer";
import { createRequire } from "node:module";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { isAbsolute, join } from "node:path";
import process from "node:process";

/** The file name of the addon inside its directory. */
export const ADDON_FILE_NAME = "pty.node";

/** node-pty's helper on macOS, which its addon runs by path to start each terminal. */
export const HELPER_FILE_NAME = "spawn-helper";

/** Where to look for a home and a temporary directory (all injectable for tests). */
export interface AddonPlaceOptions {
  /** This build's version; part of the cache directory's name. */
  version: string;
  /** `$XDG_CACHE_HOME`, when set. Ignored unless absolute, as the XDG spec says. */
  xdgCacheHome?: string;
  /** The user's home directory. */
  home: string;
  /** The system temporary directory. */
  tmp: string;
  /** The user id the cache directory must belong to; undefined skips the check. */
  uid?: number;
}

/** One place the addon was written to and tried from. */
export interface AddonAttempt {
  /** The file that was written (or would have been). */
  path: string;
  /** Why that place failed. */
  error: unknown;
}

/** Thrown when the addon could be neither cached nor written to a temporary directory. */
export class AddonExtractionError extends Error {
  /** Every place tried, in order, with its failure. */
  readonly attempts: AddonAttempt[];

  /** @param attempts every place tried, with its failure */
  constructor(attempts: AddonAttempt[]) {
    super(
      `could not load the embedded native addon from any of: ${
        attempts.map((a) => `${a.path} (${a.error instanceof Error ? a.error.message : a.error})`)
          .join("; ")
      }`,
    );
    this.name = "AddonExtractionError";
    this.attempts = attempts;
  }
}

/**
 * node:crypto, loaded on first use: only a PTY start needs it, and loading
 * it costs every server's start time.
 */
function nodeCrypto(): typeof import("node:crypto") {
  return createRequire(import.meta.url)("node:crypto");
}

/** The addon's SHA-256 as lowercase hex. */
export function addonChecksum(bytes: Uint8Array): string {
  return nodeCrypto().createHash("sha256").update(bytes).digest("hex");
}

/**
 * The cache directory for an addon with checksum `sha256`, e.g.
 * `/home/me/.cache/exec-server/0.1.0-3f2a9c0d1e2b4a5c`.
 *
 * @example
 * ```ts
 * addonCacheDir("a".repeat(64), { version: "0.1.0", home: "/home/me", tmp: "/tmp" });
 * // "/home/me/.cache/exec-server/0.1.0-aaaaaaaaaaaaaaaa"
 * ```
 */
export function addonCacheDir(sha256: string, opts: AddonPlaceOptions): string {
  const base = opts.xdgCacheHome && isAbsolute(opts.xdgCacheHome)
    ? opts.xdgCacheHome
    : join(opts.home, ".cache");
  return join(base, "exec-server", `${opts.version}-${sha256.slice(0, 16)}`);
}

/** Write `bytes` to `path` through a temporary sibling and a rename, so no reader sees half a file. */
function writeAtomically(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.${process.pid}-${nodeCrypto().randomBytes(4).toString("hex")}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Make sure the cache holds the addon and return its path. An existing file
 * is reused only when its checksum matches; otherwise it is replaced.
 *
 * @throws when the directory cannot be created, is not private to `uid`, or
 * the file cannot be written
 */
export function cacheAddon(
  bytes: Uint8Array,
  sha256: string,
  opts: AddonPlaceOptions,
  extras: AddonExtra[] = [],
): string {
  const dir = addonCacheDir(sha256, opts);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (opts.uid !== undefined && st.uid !== opts.uid) {
    throw new Error(`${dir} belongs to uid ${st.uid}, not ${opts.uid}`);
  }
  if ((st.mode & 0o022) !== 0) {
    throw new Error(`${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)})`);
  }
  const path = join(dir, ADDON_FILE_NAME);
  let existing: Buffer | undefined;
  try {
    existing = readFileSync(path);
  } catch {
    existing = undefined;
  }
  if (existing === undefined || addonChecksum(existing) !== sha256) writeAtomically(path, bytes);
  placeExtras(dir, extras);
  return path;
}

/** A file that must sit beside the addon (macOS: node-pty's `spawn-helper`). */
export interface AddonExtra {
  /** Its file name. */
  name: string;
  /** Its bytes. */
  bytes: Uint8Array;
  /** Its mode, e.g. 0o700 for an executable. */
  mode: number;
}

/** Write each extra beside the addon unless an identical one is there. */
function placeExtras(dir: string, extras: AddonExtra[]): void {
  for (const extra of extras) {
    const path = join(dir, extra.name);
    let same = false;
    try {
      same = addonChecksum(readFileSync(path)) === addonChecksum(extra.bytes);
    } catch {
      same = false;
    }
    if (!same) writeAtomically(path, extra.bytes);
    chmodSync(path, extra.mode);
  }
}

/**
 * Load the addon with `load` (which receives a file path), from the cache
 * when possible and otherwise from a private temporary directory that is
 * deleted right after loading (a loaded shared object stays mapped).
 *
 * @throws {AddonExtractionError} when every place failed
 */
export function loadEmbeddedAddon<T>(
  bytes: Uint8Array,
  opts: AddonPlaceOptions,
  load: (path: string) => T,
  extras: AddonExtra[] = [],
): T {
  const sha256 = addonChecksum(bytes);
  const attempts: AddonAttempt[] = [];
  let cachePath = join(addonCacheDir(sha256, opts), ADDON_FILE_NAME);
  try {
    cachePath = cacheAddon(bytes, sha256, opts, extras);
    return load(cachePath);
  } catch (error) {
    attempts.push({ path: cachePath, error });
  }
  let dir: string | undefined;
  let tmpPath = join(opts.tmp, "exec-server-XXXXXX", ADDON_FILE_NAME);
  try {
    dir = mkdtempSync(join(opts.tmp, "exec-server-"));
    tmpPath = join(dir, ADDON_FILE_NAME);
    writeAtomically(tmpPath, bytes);
    placeExtras(dir, extras);
    return load(tmpPath);
  } catch (error) {
    attempts.push({ path: tmpPath, error });
  } finally {
    // Extras are run later (spawn-helper, at every PTY start): they stay.
    if (dir !== undefined && extras.length === 0) rmSync(dir, { recursive: true, force: true });
  }
  throw new AddonExtractionError(attempts);
}

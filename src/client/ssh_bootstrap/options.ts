/**
 * What a caller of `connectSsh` says about a bootstrap, and what it is
 * told as one runs: the part of the bootstrap a caller writes, in a file
 * of its own so that it reads as the reference it is.
 *
 * @module
 */
import type { BinaryPlatform } from "./platform.ts";

/** A platform exec-server binaries are built for, named as `build:binary --target` names it. */
export type BinaryTarget = "linux-x64" | "linux-arm64" | "darwin-x64" | "darwin-arm64";

/** How an upload crosses the wire: gzip-compressed, or as the binary's own bytes. */
export type UploadEncoding = "gzip" | "raw";

/**
 * One step of a bootstrap, as reported to `onProgress`. `target` names the
 * binary the remote chose: a {@linkcode BinaryTarget}, or for a binary of
 * another platform its `uname` name (`FreeBSD/x86_64`), or `any` for one
 * that runs anywhere (a `#!` script).
 */
export type BootstrapEvent =
  | {
    kind: "upload";
    remotePath: string;
    target: string;
    /** `gzip` unless the remote has no `gzip` (or compressing would not make it smaller). */
    encoding: UploadEncoding;
    /** The bytes that will cross the wire (compressed when `encoding` is `gzip`). */
    wireBytes: number;
    /** The binary's own size. */
    binaryBytes: number;
    /** Same as `wireBytes`: what `progress` counts up to. */
    totalBytes: number;
  }
  | {
    kind: "progress";
    remotePath: string;
    /** Wire bytes handed to ssh so far. */
    sentBytes: number;
    /** The upload's `wireBytes`. */
    totalBytes: number;
  }
  | { kind: "ready"; remotePath: string; target: string; uploaded: boolean };

/** The `bootstrap` option of `connectSsh`. Give `localBinary` or `binaries`, not both. */
export interface SshBootstrapOptions {
  /** The one self-contained server binary to run remotely (e.g. `dist/exec-server`). */
  localBinary?: string;
  /**
   * Binaries for several targets, the remote runs the one its `uname`
   * matches: a map from target to file, or a directory holding files named
   * `exec-server-<target>` (absent ones are not offered) and optionally a
   * plain `exec-server`, whose platform is read from its header. Each
   * file's header must agree with its target.
   */
  binaries?: Partial<Record<BinaryTarget, string>> | string;
  /** Part of the cache path (default: this package's version). */
  version?: string;
  /**
   * The cache root on the remote, absolute or starting with `~/`; the
   * binary goes to `<remoteDir>/<version>-<sha256[0:16]>/exec-server`.
   * Default: `$XDG_CACHE_HOME/exec-server` or `~/.cache/exec-server`, and
   * `${TMPDIR:-/tmp}/exec-server-<uid>` when that is unusable.
   */
  remoteDir?: string;
  /**
   * With `localBinary`: the platform it runs on (default: read from its
   * ELF or Mach-O header; a `#!` script runs anywhere). `"any"` skips the
   * check.
   */
  platform?: BinaryPlatform | "any";
  /**
   * How long to wait for each answer of the remote, in ms (default 30000).
   * The upload is not timed: it lasts until the remote has read every byte.
   */
  timeoutMs?: number;
  /**
   * Print one line on stderr that follows an upload (updated in place on a
   * terminal), e.g. `exec-server: uploading linux-x64 binary to host:
   * 12.3/31.0 MiB (gzip, 83.0 MiB unpacked)`. Nothing is printed when the
   * cached binary is used.
   */
  progress?: boolean;
  /** Told when an upload starts, as it progresses, and when the server is about to start. */
  onProgress?: (event: BootstrapEvent) => void;
}

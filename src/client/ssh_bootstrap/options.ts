/**
 * What a caller of `connectSsh` says about a bootstrap, and what it is
 * told as one runs: the part of the bootstrap a caller writes, in a file
 * of its own so that it reads as the reference it is.
 *
 * @module
 */
import type { BinaryPlatform } from "./platform.ts";

/** One step of a bootstrap, as reported to `onProgress`. */
export type BootstrapEvent =
  | { kind: "upload"; remotePath: string; totalBytes: number }
  | { kind: "progress"; remotePath: string; sentBytes: number; totalBytes: number }
  | { kind: "ready"; remotePath: string; uploaded: boolean };

/** The `bootstrap` option of `connectSsh`. */
export interface SshBootstrapOptions {
  /** The self-contained server binary to run remotely (e.g. `dist/exec-server`). */
  localBinary: string;
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
   * The platform the binary runs on (default: read from its ELF or Mach-O
   * header; a `#!` script runs anywhere). `"any"` skips the check.
   */
  platform?: BinaryPlatform | "any";
  /**
   * How long to wait for each answer of the remote, in ms (default 30000).
   * The upload is not timed: it lasts until the remote has read every byte.
   */
  timeoutMs?: number;
  /** Told when an upload starts, as it progresses, and when the server is about to start. */
  onProgress?: (event: BootstrapEvent) => void;
}

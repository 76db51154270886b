/**
 * Bootstrap for `connectSsh`: make sure the remote host runs exactly the
 * local `exec-server` binary, uploading it through the same ssh connection
 * when its cache lacks it.
 *
 * One ssh invocation does everything. The remote command is a fixed
 * one-liner, `exec sh -c 'eval "$(head -c N)"' exec-server-bootstrap ARGS`,
 * which reads an N-byte POSIX `sh` script from stdin (so the login shell
 * only ever parses that line, whatever shell it is). The script checks the
 * platform, picks a cache directory and either `exec`s the cached binary
 * or asks for it, reads exactly `size` bytes from stdin into a temp file,
 * says it has them, verifies, `chmod 700`s and renames it into place, then
 * `exec`s it. Either way ssh's stdio becomes the server's stdio. The script
 * speaks to the client in lines on stdout that start with a per-connection
 * marker; the client starts JSON-RPC only after the `ready` line.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { VERSION } from "../version.ts";
import {
  type ChildServer,
  type ChildServerOptions,
  startChildServer,
} from "./connect/child_server.ts";
import { within } from "../util/deadline.ts";
import { ConnectionClosedError } from "./errors.ts";
import { shellQuote, sshCommandLine, type SshCommandOptions } from "./ssh.ts";

/** What stage of the bootstrap failed; see {@linkcode BootstrapError}. */
export type BootstrapFailure =
  /** The local binary cannot be read, or its platform cannot be told. */
  | "local"
  /** The remote's `uname -s`/`uname -m` do not match the binary's platform. */
  | "platform"
  /** No cache directory is creatable, writable, ours and executable. */
  | "directory"
  /** Writing the upload failed on the remote (usually a full disk). */
  | "write"
  /** The upload arrived with the wrong size or checksum. */
  | "verify"
  /** The verified upload could not be made executable or renamed into place. */
  | "install"
  /** The installed file cannot be executed (a `noexec` mount). */
  | "noexec"
  /** ssh or the remote script ended before the server was running. */
  | "exited"
  /** The remote did not answer within `bootstrap.timeoutMs`. */
  | "timeout"
  /** The remote answered something the client does not understand. */
  | "protocol"
  /** The binary was in place but did not come up as a server. */
  | "start";

/**
 * Bootstrapping the server on a remote host failed. `kind` says at which
 * stage; the message names the host and, once known, the remote path.
 *
 * @example
 * ```ts
 * import { BootstrapError, ExecServerClient } from "../../mod.ts";
 * try {
 *   await ExecServerClient.connectSsh("me@pi", {
 *     bootstrap: { localBinary: "dist/exec-server" },
 *   });
 * } catch (err) {
 *   if (err instanceof BootstrapError && err.kind === "platform") {
 *     console.error(`build for ${err.remotePlatform} first`);
 *   }
 * }
 * ```
 */
export class BootstrapError extends Error {
  /** The ssh destination, e.g. `me@host`. */
  readonly host: string;
  /** The stage that failed. */
  readonly kind: BootstrapFailure;
  /** The remote binary's path, once the remote chose it. */
  readonly remotePath: string | undefined;
  /** The remote's `uname -s`/`uname -m`, for a `platform` failure. */
  readonly remotePlatform: string | undefined;

  /**
   * Build the message from the host, the remote path (when known) and `detail`.
   *
   * @param host the ssh destination
   * @param kind the stage that failed
   * @param detail what went wrong
   * @param extra the remote path and platform, when known
   */
  constructor(
    host: string,
    kind: BootstrapFailure,
    detail: string,
    extra: { remotePath?: string; remotePlatform?: string; cause?: unknown } = {},
  ) {
    const where = extra.remotePath === undefined ? "" : ` at ${extra.remotePath}`;
    super(`cannot bootstrap exec-server on ${host}${where}: ${detail}`, { cause: extra.cause });
    this.name = "BootstrapError";
    this.host = host;
    this.kind = kind;
    this.remotePath = extra.remotePath;
    this.remotePlatform = extra.remotePlatform;
  }
}

/** A platform as the remote's `uname -s` and `uname -m` name it, e.g. `Linux`, `x86_64`. */
export interface BinaryPlatform {
  /** The kernel, as `uname -s` prints it: `Linux`, `Darwin`, `FreeBSD`, ... */
  os: string;
  /** The canonical machine name: `x86_64`, `aarch64`, `arm`, `i386`, `riscv64`, ... */
  arch: string;
}

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

/** What {@linkcode describeLocalBinary} learns about a binary. */
export interface LocalBinary {
  /** The absolute path. */
  path: string;
  /** The size in bytes. */
  size: number;
  /** The sha256, lowercase hex. */
  sha256: string;
  /** The platforms it runs on; `"any"` for a script; undefined when unknown. */
  platforms: BinaryPlatform[] | "any" | undefined;
}

const cache = new Map<string, { stamp: string; value: Promise<LocalBinary> }>();

/**
 * Hash a binary and read its platform, once per path and version of the
 * file (a rebuilt file, with another size, mtime or inode, is read again).
 *
 * @throws {Error} when the file cannot be read or is not a regular file
 */
export async function describeLocalBinary(path: string): Promise<LocalBinary> {
  const abs = resolve(path);
  const st = await stat(abs);
  if (!st.isFile()) throw new Error(`${abs} is not a regular file`);
  const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
  const known = cache.get(abs);
  if (known?.stamp === stamp) return known.value;
  const value = hashFile(abs);
  cache.set(abs, { stamp, value });
  value.catch(() => cache.delete(abs));
  return value;
}

async function hashFile(path: string): Promise<LocalBinary> {
  const hash = createHash("sha256");
  let header: Uint8Array | undefined;
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const bytes = chunk as Uint8Array;
    header ??= new Uint8Array(bytes.subarray(0, 4096));
    hash.update(bytes);
    size += bytes.byteLength;
  }
  header ??= new Uint8Array(0);
  return { path, size, sha256: hash.digest("hex"), platforms: detectBinaryPlatforms(header) };
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
 * import { detectBinaryPlatforms } from "./ssh_bootstrap.ts";
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

/** The `case` pattern that matches `"$(uname -s)/$(uname -m)"` on `platforms`. */
function platformPattern(platforms: BinaryPlatform[]): string {
  return platforms.flatMap(({ os, arch }) =>
    (ARCH_ALIASES[arch] ?? [arch]).map((m) => `${shellQuote(os)}/${shellQuote(m)}`)
  ).join("|");
}

function describePlatforms(platforms: BinaryPlatform[]): string {
  return platforms.map(({ os, arch }) => `${os}/${arch}`).join(" or ");
}

/** Everything the remote script is made from. */
export interface BootstrapScriptParams {
  /** Starts every line the script prints for the client. */
  marker: string;
  /** The binary's sha256, lowercase hex. */
  sha256: string;
  /** The binary's size in bytes. */
  size: number;
  /** The per-binary directory name, `<version>-<sha256[0:16]>`. */
  dirName: string;
  /** Makes the remote's temp and probe file names unique to this connection. */
  tag: string;
  /** The cache root (absolute or `~/...`), or undefined for the default. */
  remoteDir?: string;
  /** Platforms the binary runs on; undefined to skip the check. */
  platforms?: BinaryPlatform[];
}

/** `remoteDir` as a shell word, with a leading `~` made `$HOME`. */
function remoteDirWord(dir: string): string {
  if (dir === "~") return '"$HOME"';
  if (dir.startsWith("~/")) return `"$HOME"/${shellQuote(dir.slice(2))}`;
  return shellQuote(dir);
}

/**
 * The POSIX `sh` script the remote runs (sent on stdin; see the module
 * doc). Its lines for the client, after the marker:
 * `ready cached|uploaded PATH`, `upload PATH` (then it reads exactly
 * `size` bytes), `received` (once it has them) and `error KIND DETAIL`
 * (then it exits).
 *
 * @throws {TypeError} for a `remoteDir` that is neither absolute nor under `~/`
 */
export function bootstrapScript(p: BootstrapScriptParams): string {
  if (p.remoteDir !== undefined && !/^(\/|~\/|~$)/.test(p.remoteDir)) {
    throw new TypeError(
      `bootstrap.remoteDir must be absolute or start with ~/, got ${JSON.stringify(p.remoteDir)}`,
    );
  }
  const platformCheck = p.platforms === undefined ? [] : [
    "os=$(uname -s 2>/dev/null); arch=$(uname -m 2>/dev/null)",
    'case "$os/$arch" in',
    `${platformPattern(p.platforms)}) ;;`,
    '*) say error platform "$os/$arch"; exit 90 ;;',
    "esac",
  ];
  const chooseDir = p.remoteDir === undefined
    ? [
      // XDG says a relative XDG_CACHE_HOME is invalid and to be ignored.
      "case ${XDG_CACHE_HOME:-} in /*) c=$XDG_CACHE_HOME/exec-server ;; *) c=${HOME:+$HOME/.cache/exec-server} ;; esac",
      "t=${TMPDIR:-/tmp}; t=${t%/}/exec-server-$uid",
      // The /tmp fallback is shared with other users, who may have made
      // its root (or a symlink by that name) first: see private().
      'pick "$c" private || pick "$t" private || { say error directory "${tried#; }"; exit 91; }',
    ]
    : [
      `pick ${
        remoteDirWord(p.remoteDir)
      } shared || { say error directory "\${tried#; }"; exit 91; }`,
    ];
  return [
    `m=${shellQuote(p.marker)}`,
    `sum=${shellQuote(p.sha256)}`,
    `size=${p.size}`,
    `name=${shellQuote(p.dirName)}`,
    `tag=${shellQuote(p.tag)}`,
    "say() { printf '%s\\n' \"$m $*\"; }",
    ...platformCheck,
    "if command -v sha256sum >/dev/null 2>&1; then hash=sha256sum",
    "elif command -v shasum >/dev/null 2>&1; then hash='shasum -a 256'",
    "elif command -v openssl >/dev/null 2>&1; then hash='openssl dgst -sha256 -r'",
    "else hash=; fi",
    // Without a sha256 tool, the checksum in the directory name plus the
    // size is all there is to go on.
    "valid() {",
    '  [ -f "$1" ] || return 1',
    '  if [ -n "$hash" ]; then h=$($hash < "$1") && [ "${h%% *}" = "$sum" ]',
    '  else n=$(wc -c < "$1") && [ $n -eq "$size" ]; fi',
    "}",
    "tried=",
    "uid=$(id -u)",
    // `ls -ld` reads one lstat, so the type (d, not l for a symlink), mode
    // and owner it shows belong to the same file; `[ -O ]` would follow a
    // symlink, and a second test could see a swapped entry.
    "ours() {",
    '  ls -ldn -- "$1" 2>/dev/null | {',
    '    read -r mode links owner rest && [ "$owner" = "$uid" ] &&',
    "    case $mode in $2) ;; *) false ;; esac",
    "  }",
    "}",
    // A cache directory must be a real directory of ours that no one else
    // can write to: anyone who can rename entries in it (or re-point a
    // symlink) can swap the binary between its check and its exec. Another
    // user's directory is refused even though root could chmod it. Once it
    // is ours, a sticky /tmp keeps others from replacing it.
    "private() {",
    '  mkdir -p -m 700 "$1" 2>/dev/null',
    '  if [ -L "$1" ]; then why="is a symlink"',
    '  elif [ ! -d "$1" ]; then why="cannot be created"',
    '  elif ! ours "$1" \'d*\'; then why="belongs to another user"',
    // chmod's own failure (a read-only filesystem) is not the question:
    // only whether others can write there afterwards.
    '  elif chmod 700 "$1" 2>/dev/null; ! ours "$1" \'d????-??-*\'; then',
    '    why="stays writable by others after chmod 700"',
    "  else return 0; fi",
    '  tried="$tried; $1: $why"; return 1',
    "}",
    "usable() {",
    '  private "$1" || return 1',
    '  if [ ! -w "$1" ]; then tried="$tried; $1: not writable"; return 1; fi',
    "  p=$1/.probe.$tag",
    '  if ! : 2>/dev/null > "$p"; then tried="$tried; $1: cannot create files (disk full?)"; return 1; fi',
    // access(X_OK) fails on a noexec mount, even for root.
    '  chmod 700 "$p"; if [ -x "$p" ]; then rm -f "$p"; return 0; fi',
    '  rm -f "$p"; tried="$tried; $1: files there cannot be executed (mounted noexec?)"; return 1',
    "}",
    "pick() {",
    '  [ -n "$1" ] || return 1',
    // An explicit remoteDir is taken as given; its per-binary directory is checked.
    '  if [ "$2" = private ]; then private "$1" || return 1; else mkdir -p "$1" 2>/dev/null; fi',
    '  usable "$1/$name" && d=$1/$name',
    "}",
    ...chooseDir,
    "bin=$d/exec-server",
    'if valid "$bin" && [ -x "$bin" ]; then say ready cached "$bin"; exec "$bin" "$@"; fi',
    "tmp=$d/.exec-server.$tag",
    `trap 'rm -f "$tmp"; exit 1' HUP INT TERM`,
    'say upload "$bin"',
    'if ! head -c "$size" > "$tmp"; then rm -f "$tmp"; say error write "$tmp"; exit 92; fi',
    // The client times what follows from here: until now it could not tell
    // a slow link from a stuck remote.
    "say received",
    'if ! valid "$tmp"; then n=$(wc -c < "$tmp"); rm -f "$tmp"; say error verify $n; exit 93; fi',
    // rename(2) within one directory is atomic: a concurrent connection sees
    // the old file or the whole new one, never a partial upload.
    'if ! chmod 700 "$tmp" || ! mv -f "$tmp" "$bin"; then',
    '  rm -f "$tmp"; say error install "$bin"; exit 94',
    "fi",
    "trap - HUP INT TERM",
    'if [ ! -x "$bin" ]; then say error noexec "$bin"; exit 95; fi',
    'say ready uploaded "$bin"',
    'exec "$bin" "$@"',
    "",
  ].join("\n");
}

/**
 * The remote command that reads and runs a `scriptBytes`-byte script from
 * stdin. `head -c` stops at exactly that many bytes, and nothing else is
 * sent until the script asks, so the rest of stdin stays for the upload
 * and then the server.
 */
export function bootstrapRemoteCommand(scriptBytes: number): string {
  return `exec sh -c ${shellQuote(`eval "$(head -c ${scriptBytes})"`)} exec-server-bootstrap`;
}

/** Options of {@linkcode startBootstrappedSsh}. */
export interface BootstrappedSshOptions extends SshCommandOptions, ChildServerOptions {
  /** What to run and where to cache it. */
  bootstrap: SshBootstrapOptions;
}

/** A child ssh whose remote end is (about to be) the bootstrapped server. */
export interface BootstrappedServer extends ChildServer {
  /** The binary's path on the remote. */
  remotePath: string;
  /** Whether this connection uploaded it (false: the cached copy was valid). */
  uploaded: boolean;
  /**
   * Turn a failed handshake into a {@linkcode BootstrapError} of kind
   * `start` when the server never came up; other errors pass unchanged.
   */
  startFailure(err: unknown): unknown;
}

const UPLOAD_CHUNK_BYTES = 1 << 20;
const MAX_NOISE_BYTES = 64 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Run `ssh destination` with the bootstrap script, upload the binary when
 * the remote's cache lacks it, and return once the remote `exec`ed it.
 *
 * @throws {BootstrapError} when any stage fails (see {@linkcode BootstrapFailure})
 * @throws {ConnectError} when ssh cannot be started
 */
export async function startBootstrappedSsh(
  destination: string,
  opts: BootstrappedSshOptions,
): Promise<BootstrappedServer> {
  const boot = opts.bootstrap;
  if (opts.binary !== undefined) {
    throw new TypeError("give either binary or bootstrap to connectSsh, not both");
  }
  const version = boot.version ?? VERSION;
  if (!/^[\w.+-]+$/.test(version)) {
    throw new TypeError(`bootstrap.version must be a plain word, got ${JSON.stringify(version)}`);
  }
  let local: LocalBinary;
  try {
    local = await describeLocalBinary(boot.localBinary);
  } catch (err) {
    throw new BootstrapError(
      destination,
      "local",
      `cannot read ${boot.localBinary}: ${err instanceof Error ? err.message : err}`,
      { cause: err },
    );
  }
  const platforms = boot.platform === "any"
    ? undefined
    : boot.platform !== undefined
    ? [boot.platform]
    : local.platforms === "any"
    ? undefined
    : local.platforms;
  if (boot.platform === undefined && local.platforms === undefined) {
    throw new BootstrapError(
      destination,
      "local",
      `cannot tell which platform ${local.path} is built for (not ELF, Mach-O or a #! script); ` +
        `pass bootstrap.platform`,
    );
  }
  const marker = `exec-server-bootstrap:${randomBytes(9).toString("hex")}`;
  const script = encoder.encode(bootstrapScript({
    marker,
    sha256: local.sha256,
    size: local.size,
    dirName: `${version}-${local.sha256.slice(0, 16)}`,
    tag: randomBytes(6).toString("hex"),
    remoteDir: boot.remoteDir,
    platforms,
  }));
  const [command, args] = sshCommandLine(destination, {
    ...opts,
    binary: bootstrapRemoteCommand(script.byteLength),
  });
  const session = new BootstrapSession(destination, local, marker, boot, platforms);
  const child = await startChildServer(
    command,
    args,
    opts,
    (io) => session.run(script, io.stdout, io.stdin, io.explainEnd),
  );
  const remotePath = session.remotePath!;
  return {
    ...child,
    remotePath,
    uploaded: session.uploaded,
    startFailure: (err) =>
      err instanceof ConnectionClosedError
        ? new BootstrapError(destination, "start", `the server did not start: ${err.reason}`, {
          remotePath,
          cause: err,
        })
        : err,
  };
}

type Answer = { words: string[]; rest: string };

/** The client's half of the conversation with the remote script. */
class BootstrapSession {
  remotePath: string | undefined;
  uploaded = false;
  #host: string;
  #local: LocalBinary;
  #marker: string;
  #opts: SshBootstrapOptions;
  #platforms: BinaryPlatform[] | undefined;
  #timeoutMs: number;

  constructor(
    host: string,
    local: LocalBinary,
    marker: string,
    opts: SshBootstrapOptions,
    platforms: BinaryPlatform[] | undefined,
  ) {
    this.#host = host;
    this.#local = local;
    this.#marker = marker;
    this.#opts = opts;
    this.#platforms = platforms;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async run(
    script: Uint8Array,
    stdout: ReadableStream<Uint8Array>,
    stdin: WritableStream<Uint8Array>,
    explainEnd: () => Promise<string | undefined>,
  ): Promise<ReadableStream<Uint8Array>> {
    const lines = new MarkedLines(stdout, this.#marker);
    const writer = stdin.getWriter();
    // A failed write means the remote is gone; the answer (or its absence) says why.
    writer.write(script).catch(() => {});
    let answer = await this.#answer(lines, explainEnd, "the remote script's first answer");
    if (answer.words[0] === "upload") {
      this.remotePath = answer.rest;
      answer = await this.#upload(lines, writer, explainEnd);
    }
    if (answer.words[0] !== "ready") throw this.#unexpected(answer);
    this.remotePath = answer.words.slice(2).join(" ");
    this.uploaded = answer.words[1] === "uploaded";
    this.#opts.onProgress?.({
      kind: "ready",
      remotePath: this.remotePath,
      uploaded: this.uploaded,
    });
    writer.releaseLock();
    return lines.rest();
  }

  async #upload(
    lines: MarkedLines,
    writer: WritableStreamDefaultWriter<Uint8Array>,
    explainEnd: () => Promise<string | undefined>,
  ): Promise<Answer> {
    const remotePath = this.remotePath!;
    const totalBytes = this.#local.size;
    this.#opts.onProgress?.({ kind: "upload", remotePath, totalBytes });
    let stop = false;
    const sent = this.#send(writer, () => stop, (sentBytes) => {
      this.#opts.onProgress?.({ kind: "progress", remotePath, sentBytes, totalBytes });
    });
    const early = lines.next();
    // A local failure (unreadable file, a throwing onProgress) rejects the race as it is.
    const first = await Promise.race([
      sent.then((writeError) => ({ writeError })),
      early.then((line) => ({ line }), (err: unknown) => ({ line: err as Error })),
    ]).finally(() => stop = true);
    let received: Answer;
    if ("line" in first) {
      // The remote's answer decides now, whatever becomes of the last write.
      sent.catch(() => {});
      // The remote answered before the last write returned: `received`, when
      // the pipe took the tail but told us late; else an error, or nonsense.
      received = await this.#check(first.line, explainEnd, "the upload was complete");
    } else if (first.writeError !== undefined) {
      // The remote went away; its last words, if any, say why.
      const line = await within(early.catch(() => null), 2000);
      if (!line) throw await this.#ended(explainEnd, "the upload was complete", first.writeError);
      received = await this.#check(line, explainEnd, "the upload was complete");
    } else {
      // Every byte is in ssh's hands, but on a slow link much of it may
      // still be on the way: no timer until the remote says it has it all.
      // ssh ending (a dead connection) still ends the wait.
      received = await this.#check(
        await early.catch((err: Error) => err),
        explainEnd,
        "the upload was complete",
      );
    }
    if (received.words[0] !== "received") throw this.#unexpected(received);
    return this.#answer(lines, explainEnd, "the remote's check of the upload");
  }

  /** Send the binary; resolves to the write error when the remote stops reading, else undefined. */
  async #send(
    writer: WritableStreamDefaultWriter<Uint8Array>,
    stopped: () => boolean,
    progress: (sentBytes: number) => void,
  ): Promise<unknown> {
    const { path, size } = this.#local;
    const file = await open(path, "r");
    try {
      let sent = 0;
      while (sent < size && !stopped()) {
        const chunk = new Uint8Array(Math.min(UPLOAD_CHUNK_BYTES, size - sent));
        const { bytesRead } = await file.read(chunk, 0, chunk.byteLength, sent);
        if (bytesRead === 0) {
          throw new BootstrapError(
            this.#host,
            "local",
            `${path} shrank while it was uploaded (was ${size} bytes)`,
            { remotePath: this.remotePath },
          );
        }
        try {
          await writer.write(chunk.subarray(0, bytesRead));
        } catch (err) {
          return err ?? new Error("write failed");
        }
        sent += bytesRead;
        progress(sent);
      }
      return undefined;
    } finally {
      await file.close();
    }
  }

  /** The next marked line, within the timeout; errors and the end become BootstrapErrors. */
  async #answer(
    lines: MarkedLines,
    explainEnd: () => Promise<string | undefined>,
    what: string,
  ): Promise<Answer> {
    const line = await within(lines.next().catch((err: Error) => err), this.#timeoutMs);
    if (line === undefined) {
      throw new BootstrapError(
        this.#host,
        "timeout",
        `waited ${this.#timeoutMs} ms for ${what} (bootstrap.timeoutMs)`,
        { remotePath: this.remotePath },
      );
    }
    return this.#check(line, explainEnd, what);
  }

  /** `line` unless it is an error or the end (`null`, which came before `awaited`). */
  async #check(
    line: Answer | null | Error,
    explainEnd: () => Promise<string | undefined>,
    awaited: string,
  ): Promise<Answer> {
    if (line === null) throw await this.#ended(explainEnd, awaited);
    if (line instanceof Error) {
      throw new BootstrapError(this.#host, "protocol", line.message, {
        remotePath: this.remotePath,
        cause: line,
      });
    }
    if (line.words[0] !== "error") return line;
    const [, kind = "", ...rest] = line.words;
    const detail = rest.join(" ");
    const at = { remotePath: this.remotePath };
    switch (kind) {
      case "platform":
        throw new BootstrapError(
          this.#host,
          "platform",
          `the remote is ${detail}, but ${this.#local.path} is built for ` +
            `${describePlatforms(this.#platforms ?? [])}`,
          { remotePlatform: detail },
        );
      case "directory":
        throw new BootstrapError(
          this.#host,
          "directory",
          `no usable cache directory${
            this.#opts.remoteDir === undefined ? " (pass bootstrap.remoteDir)" : ""
          }: ${detail}`,
        );
      case "write":
        throw new BootstrapError(
          this.#host,
          "write",
          `writing ${detail} failed (disk full?); ${await explainEnd()}`,
          at,
        );
      case "verify":
        throw new BootstrapError(
          this.#host,
          "verify",
          `the upload arrived damaged: ${detail} of ${this.#local.size} bytes, ` +
            `or a sha256 other than ${this.#local.sha256}`,
          at,
        );
      case "install":
        throw new BootstrapError(
          this.#host,
          "install",
          `cannot chmod or rename the upload into place; ${await explainEnd()}`,
          at,
        );
      case "noexec":
        throw new BootstrapError(
          this.#host,
          "noexec",
          "the file cannot be executed (its filesystem is mounted noexec?)",
          at,
        );
    }
    throw this.#unexpected(line);
  }

  async #ended(
    explainEnd: () => Promise<string | undefined>,
    awaited: string,
    cause?: unknown,
  ): Promise<BootstrapError> {
    const why = await explainEnd() ?? "ssh closed its output";
    return new BootstrapError(
      this.#host,
      "exited",
      `the connection ended before ${awaited}: ${why}`,
      {
        remotePath: this.remotePath,
        cause,
      },
    );
  }

  #unexpected(line: Answer): BootstrapError {
    return new BootstrapError(
      this.#host,
      "protocol",
      `unexpected answer from the remote script: ${JSON.stringify(line.words.join(" "))}`,
      { remotePath: this.remotePath },
    );
  }
}

/**
 * Reads the lines that start with `marker` from a byte stream, skipping
 * anything else (a login script's chatter), then hands the rest on.
 */
class MarkedLines {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #prefix: string;
  #buffer = new Uint8Array(0);
  #skipped = 0;

  constructor(stream: ReadableStream<Uint8Array>, marker: string) {
    this.#reader = stream.getReader();
    this.#prefix = `${marker} `;
  }

  /** The next marked line split into words (and all but the first joined), or null at the end. */
  async next(): Promise<Answer | null> {
    while (true) {
      const nl = this.#buffer.indexOf(0x0a);
      if (nl >= 0) {
        const line = decoder.decode(this.#buffer.subarray(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
        // Chatter without a final newline may precede the marker on its line.
        const at = line.indexOf(this.#prefix);
        if (at >= 0) {
          const text = line.slice(at + this.#prefix.length);
          const words = text.split(" ");
          return { words, rest: words.slice(1).join(" ") };
        }
        this.#skipped += nl + 1;
      }
      if (this.#skipped + this.#buffer.byteLength > MAX_NOISE_BYTES) {
        throw new Error(`more than ${MAX_NOISE_BYTES} bytes of unexpected output on stdout`);
      }
      if (nl >= 0) continue;
      const { done, value } = await this.#reader.read();
      if (done) return null;
      const joined = new Uint8Array(this.#buffer.byteLength + value.byteLength);
      joined.set(this.#buffer);
      joined.set(value, this.#buffer.byteLength);
      this.#buffer = joined;
    }
  }

  /** The rest of the stream: what was read past the last marked line, then everything after. */
  rest(): ReadableStream<Uint8Array> {
    const reader = this.#reader;
    const leftover = this.#buffer;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        if (leftover.byteLength > 0) controller.enqueue(leftover);
      },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
  }
}

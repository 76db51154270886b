/**
 * The POSIX `sh` script the remote runs to find, check, receive and start
 * the server binary, and the fixed one-line command that reads it from
 * stdin. The script is built from parts, one per step, in the order the
 * remote runs them; each part's comments say why the shell code is as it
 * is, since a subtle race or a login shell's quirk hides behind most
 * lines.
 *
 * @module
 */
import { shellQuote } from "../ssh.ts";
import { type BinaryPlatform, unameMachines } from "./platform.ts";

/** One binary the script may choose, as the script sees it. */
export interface ScriptCandidate {
  /** The binary's sha256, lowercase hex. */
  sha256: string;
  /** The binary's size in bytes. */
  size: number;
  /** The per-binary directory name, `<version>-<sha256[0:16]>`. */
  dirName: string;
  /** Platforms the binary runs on; undefined: any (no check). */
  platforms?: BinaryPlatform[];
}

/** Everything the remote script is made from. */
export interface BootstrapScriptParams {
  /** Starts every line the script prints for the client. */
  marker: string;
  /** Makes the remote's temp and probe file names unique to this connection. */
  tag: string;
  /** The cache root (absolute or `~/...`), or undefined for the default. */
  remoteDir?: string;
  /** The binaries on offer; the first whose platforms match `uname` is chosen. */
  candidates: ScriptCandidate[];
}

/**
 * The POSIX `sh` script the remote runs (sent on stdin; see the module
 * doc of `ssh_bootstrap.ts`). Its lines for the client, after the marker:
 * `ready cached|uploaded INDEX PATH`; `upload INDEX ACCEPT PATH` (ACCEPT:
 * `gzip` or `raw`), after which it reads one header line `ENCODING BYTES`
 * and then exactly BYTES bytes; `received` (once it has unpacked them);
 * and `error KIND DETAIL` (then it exits). INDEX is the chosen candidate's.
 *
 * @example
 * ```ts
 * import { bootstrapScript } from "./script.ts";
 * const script = bootstrapScript({
 *   marker: "exec-server-bootstrap:0123",
 *   tag: "cafe",
 *   candidates: [{ sha256: "ab".repeat(32), size: 1024, dirName: "0.1.0-abababababababab" }],
 * });
 * script.startsWith("m=exec-server-bootstrap:0123\n"); // true
 * ```
 *
 * @throws {TypeError} for a `remoteDir` that is neither absolute nor under `~/`, or no candidate
 */
export function bootstrapScript(p: BootstrapScriptParams): string {
  if (p.remoteDir !== undefined && !/^(\/|~\/|~$)/.test(p.remoteDir)) {
    throw new TypeError(
      `bootstrap.remoteDir must be absolute or start with ~/, got ${JSON.stringify(p.remoteDir)}`,
    );
  }
  if (p.candidates.length === 0) throw new TypeError("the bootstrap script needs a candidate");
  return [
    ...settings(p),
    ...chooseCandidate(p.candidates),
    ...checksum(),
    ...directoryTests(),
    ...chooseDirectory(p.remoteDir),
    ...runOrUpload(),
    "",
  ].join("\n");
}

/**
 * The remote command that reads and runs a `scriptBytes`-byte script from
 * stdin. `head -c` stops at exactly that many bytes, and nothing else is
 * sent until the script asks, so the rest of stdin stays for the upload
 * and then the server.
 *
 * @example
 * ```ts
 * import { bootstrapRemoteCommand } from "./script.ts";
 * bootstrapRemoteCommand(1234);
 * // exec sh -c 'eval "$(head -c 1234)"' exec-server-bootstrap
 * ```
 */
export function bootstrapRemoteCommand(scriptBytes: number): string {
  return `exec sh -c ${shellQuote(`eval "$(head -c ${scriptBytes})"`)} exec-server-bootstrap`;
}

/** The script's constants, and `say`, which prints a line for the client. */
function settings(p: BootstrapScriptParams): string[] {
  return [
    `m=${shellQuote(p.marker)}`,
    `tag=${shellQuote(p.tag)}`,
    "say() { printf '%s\\n' \"$m $*\"; }",
  ];
}

/**
 * Sets `i`, `sum`, `size` and `name` to the first candidate whose
 * platforms `uname` names, or stops with `error platform`. A candidate
 * that runs anywhere matches whatever `uname` says (and needs no `uname`
 * when it comes first).
 */
function chooseCandidate(candidates: ScriptCandidate[]): string[] {
  const assign = (c: ScriptCandidate, i: number) =>
    `i=${i}; sum=${shellQuote(c.sha256)}; size=${c.size}; name=${shellQuote(c.dirName)}`;
  if (candidates[0].platforms === undefined) return [assign(candidates[0], 0)];
  const branches: string[] = [];
  for (const [i, c] of candidates.entries()) {
    const pattern = c.platforms === undefined ? "*" : platformPattern(c.platforms);
    branches.push(`${pattern}) ${assign(c, i)} ;;`);
    if (c.platforms === undefined) break;
  }
  if (candidates.every((c) => c.platforms !== undefined)) {
    branches.push('*) say error platform "$os/$arch"; exit 90 ;;');
  }
  return [
    "os=$(uname -s 2>/dev/null); arch=$(uname -m 2>/dev/null)",
    'case "$os/$arch" in',
    ...branches,
    "esac",
  ];
}

/** The `case` pattern that matches `"$(uname -s)/$(uname -m)"` on `platforms`. */
function platformPattern(platforms: BinaryPlatform[]): string {
  return platforms.flatMap(({ os, arch }) =>
    unameMachines(arch).map((m) => `${shellQuote(os)}/${shellQuote(m)}`)
  ).join("|");
}

/** Picks a sha256 tool and defines `valid FILE`: is FILE the binary? */
function checksum(): string[] {
  return [
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
  ];
}

/**
 * Defines the tests a cache directory must pass (`ours`, `private`,
 * `usable`) and `pick DIR private|shared`, which sets `d` to the
 * per-binary directory under DIR when it passes them; each refusal is
 * added to `tried` for the error message.
 */
function directoryTests(): string[] {
  return [
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
  ];
}

/** Sets `d` to the per-binary directory, or stops with `error directory`. */
function chooseDirectory(remoteDir: string | undefined): string[] {
  if (remoteDir !== undefined) {
    return [
      `pick ${remoteDirWord(remoteDir)} shared || { say error directory "\${tried#; }"; exit 91; }`,
    ];
  }
  return [
    // XDG says a relative XDG_CACHE_HOME is invalid and to be ignored.
    "case ${XDG_CACHE_HOME:-} in /*) c=$XDG_CACHE_HOME/exec-server ;; *) c=${HOME:+$HOME/.cache/exec-server} ;; esac",
    "t=${TMPDIR:-/tmp}; t=${t%/}/exec-server-$uid",
    // The /tmp fallback is shared with other users, who may have made
    // its root (or a symlink by that name) first: see private().
    'pick "$c" private || pick "$t" private || { say error directory "${tried#; }"; exit 91; }',
  ];
}

/** `remoteDir` as a shell word, with a leading `~` made `$HOME`. */
function remoteDirWord(dir: string): string {
  if (dir === "~") return '"$HOME"';
  if (dir.startsWith("~/")) return `"$HOME"/${shellQuote(dir.slice(2))}`;
  return shellQuote(dir);
}

/**
 * `exec`s the cached binary when it is valid; else asks for it, receives,
 * verifies and installs it, then `exec`s that.
 */
function runOrUpload(): string[] {
  return [
    "bin=$d/exec-server",
    'if valid "$bin" && [ -x "$bin" ]; then say ready cached $i "$bin"; exec "$bin" "$@"; fi',
    // `cat` is there to tell a full disk from a corrupt stream: see receive().
    "if command -v gzip >/dev/null 2>&1 && command -v cat >/dev/null 2>&1; then accept=gzip",
    "else accept=raw; fi",
    "tmp=$d/.exec-server.$tag",
    `trap 'rm -f "$tmp"; exit 1' HUP INT TERM`,
    ...receive(),
    // The client times what follows from here: until now it could not tell
    // a slow link from a stuck remote.
    "say received",
    'if ! valid "$tmp"; then got=$(wc -c < "$tmp"); rm -f "$tmp"; say error verify $got; exit 93; fi',
    // rename(2) within one directory is atomic: a concurrent connection sees
    // the old file or the whole new one, never a partial upload.
    'if ! chmod 700 "$tmp" || ! mv -f "$tmp" "$bin"; then',
    '  rm -f "$tmp"; say error install "$bin"; exit 94',
    "fi",
    "trap - HUP INT TERM",
    'if [ ! -x "$bin" ]; then say error noexec "$bin"; exit 95; fi',
    'say ready uploaded $i "$bin"',
    'exec "$bin" "$@"',
  ];
}

/**
 * Asks for the binary and writes it, unpacked, to `$tmp`.
 *
 * The client only learns whether the remote can unpack gzip from the
 * `upload` line, and compressing can take it seconds, so the size of what
 * comes cannot be in the script: a header line `ENCODING BYTES` comes
 * first. `read` takes it a byte at a time (POSIX requires that `read`
 * consume nothing past its newline), leaving the upload in stdin, of which
 * `head -c` then takes exactly BYTES bytes, leaving the rest for the
 * server. The client sends the header as soon as it knows the upload, and
 * exactly BYTES bytes after it; a missing or malformed header (the client
 * gone) ends the script instead of a wait for bytes that never come.
 *
 * With no `pipefail` in POSIX sh, each stage of the unpacking pipeline
 * reports its own failure on fd 3: a failed `cat` is a write error (a
 * full disk, which also breaks gzip's pipe), a failed `gzip` alone a
 * corrupt stream, which is a failed verification.
 */
function receive(): string[] {
  return [
    'say upload $i $accept "$bin"',
    "enc=; n=",
    'read -r enc n || :; got="$enc $n"',
    'case $enc in raw|"$accept") ;; *) n= ;; esac',
    'case $n in ""|*[!0-9]*) say error header "$got"; exit 96 ;; esac',
    "why=",
    'if [ "$enc" = gzip ]; then',
    '  why=$( { head -c "$n" | { gzip -dc || echo unpack >&3; } |',
    '    { cat > "$tmp" || echo write >&3; }; } 3>&1 )',
    'elif ! head -c "$n" > "$tmp"; then why=write; fi',
    "case $why in",
    '  *write*) rm -f "$tmp"; say error write "$tmp"; exit 92 ;;',
    '  ?*) rm -f "$tmp"; say error verify unpack; exit 93 ;;',
    "esac",
  ];
}

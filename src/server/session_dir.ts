/**
 * The private directory through which one user's servers find each
 * other's sessions: one socket per session, named by a hash of its id, and
 * a secret that a connecting server must present. Only the owner may enter
 * the directory (mode 0700, checked to be a real directory owned by this
 * uid, never a symlink), so no other user can reach a socket; the secret,
 * readable by the owner alone, is the peer check that Node and Deno, which
 * expose no SO_PEERCRED, otherwise lack.
 *
 * @module
 */
import { lstat, mkdir, open, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import process from "node:process";

/** Why a session directory cannot be used. */
export class SessionDirError extends Error {
  /** The directory. */
  readonly dir: string;

  /** @param dir the directory; @param problem what is wrong with it */
  constructor(dir: string, problem: string) {
    super(`session directory ${dir} ${problem}`);
    this.name = "SessionDirError";
    this.dir = dir;
  }
}

/** The longest directory whose sockets' paths fit `sockaddr_un` (107 bytes, minus `/s-<32 hex>.sock`). */
const MAX_DIR_BYTES = 107 - 40;

/** This process's uid (0 where the platform has none). */
function uid(): number {
  return process.getuid?.() ?? 0;
}

/**
 * The default session directory: `$XDG_RUNTIME_DIR/exec-server` when that
 * runtime directory is this user's own, else `$TMPDIR/exec-server-UID`.
 */
export async function defaultSessionDir(): Promise<string> {
  const runtimeDir = process.env.XDG_RUNTIME_DIR;
  if (runtimeDir?.startsWith("/")) {
    try {
      const st = await stat(runtimeDir);
      if (st.isDirectory() && st.uid === uid() && (st.mode & 0o077) === 0) {
        return `${runtimeDir.replace(/\/+$/, "")}/exec-server`;
      }
    } catch {
      // Not there: fall back to the temporary directory.
    }
  }
  return `${tmpdir().replace(/\/+$/, "")}/exec-server-${uid()}`;
}

/**
 * Make sure `dir` exists and is private: created with mode 0700 when
 * missing (its parent must exist), then checked.
 *
 * @throws {SessionDirError} when it is a symlink, not a directory, owned by
 * another user, or open to group or others
 */
export async function preparePrivateDir(dir: string): Promise<void> {
  // A unix socket's path has room for 107 bytes: the directory, "/" and a socket's name.
  const bytes = new TextEncoder().encode(dir).byteLength;
  if (bytes > MAX_DIR_BYTES) {
    throw new SessionDirError(
      dir,
      `is too long for socket paths (${bytes} bytes; at most ${MAX_DIR_BYTES}): choose a shorter --session-dir`,
    );
  }
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as { code?: string }).code !== "EEXIST") {
      throw new SessionDirError(dir, `cannot be created: ${(err as Error).message}`);
    }
  }
  await checkPrivateDir(dir);
}

/**
 * Check that `dir` is private to this uid without making anything: what a
 * server that looks for another's session does before it trusts the
 * directory's sockets and secret.
 *
 * @throws {SessionDirError} as {@linkcode preparePrivateDir}, and when it is missing
 */
export async function checkPrivateDir(dir: string): Promise<void> {
  let st;
  try {
    st = await lstat(dir);
  } catch (err) {
    throw new SessionDirError(dir, `cannot be read: ${(err as Error).message}`);
  }
  if (st.isSymbolicLink()) throw new SessionDirError(dir, "is a symbolic link");
  if (!st.isDirectory()) throw new SessionDirError(dir, "is not a directory");
  if (st.uid !== uid()) {
    throw new SessionDirError(dir, `belongs to uid ${st.uid}, not to this uid ${uid()}`);
  }
  if ((st.mode & 0o077) !== 0) {
    throw new SessionDirError(
      dir,
      `has mode ${(st.mode & 0o777).toString(8)}: it must be 700 (only its owner may enter)`,
    );
  }
}

/**
 * The directory's secret (64 hex digits), made on first use by whichever
 * server comes first; a file of mode 0600 owned by this uid. For a
 * directory {@linkcode preparePrivateDir} has just checked.
 *
 * @throws {SessionDirError} when the file is not a private regular file
 */
export async function sessionSecret(dir: string): Promise<string> {
  const path = `${dir}/secret`;
  try {
    const file = await open(path, "wx", 0o600);
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const secret = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    await file.writeFile(secret);
    await file.close();
    return secret;
  } catch (err) {
    if ((err as { code?: string }).code !== "EEXIST") throw err;
  }
  return await readSecretFile(dir);
}

/**
 * The directory's secret as its first server made it, read only after
 * checking that the directory and the file are private to this uid.
 *
 * @throws {SessionDirError} when either is not, or there is no secret
 */
export async function readSessionSecret(dir: string): Promise<string> {
  await checkPrivateDir(dir);
  return await readSecretFile(dir);
}

/** The secret file of a checked directory, once it is known to be a private file of this uid. */
async function readSecretFile(dir: string): Promise<string> {
  const path = `${dir}/secret`;
  let st;
  try {
    st = await lstat(path);
  } catch {
    throw new SessionDirError(dir, "holds no secret");
  }
  if (!st.isFile() || st.uid !== uid() || (st.mode & 0o077) !== 0) {
    throw new SessionDirError(dir, "holds a secret that is not a private file of this user");
  }
  // A first server racing this one may not have written it yet.
  for (let attempt = 0; attempt < 50; attempt++) {
    const secret = (await readFile(path, "utf8")).trim();
    if (/^[0-9a-f]{64}$/.test(secret)) return secret;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new SessionDirError(dir, "holds a secret file that is not 64 hex digits");
}

/** The socket of session `id` in `dir`: named by a hash, so that names reveal no id. */
export async function sessionSocketPath(dir: string, id: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(id));
  const hex = [...new Uint8Array(digest).subarray(0, 16)]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${dir}/s-${hex}.sock`;
}

/** Whether two secrets are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks made before a child is forked, so that a missing program or
 * working directory is reported as such (with its errno) rather than as a
 * child that printed an error and exited 1.
 *
 * @module
 */
import { access, constants, stat } from "node:fs/promises";

/** A spawn precondition that failed, with the POSIX error name. */
export class SpawnCheckError extends Error {
  /** The POSIX error name, e.g. `ENOENT`. */
  readonly errno: string;

  /** @param message names the bad value; @param errno its error name */
  constructor(message: string, errno: string) {
    super(message);
    this.name = "SpawnCheckError";
    this.errno = errno;
  }
}

/** Fail unless `cwd` is an existing directory. */
export async function checkCwd(cwd: string): Promise<void> {
  let info;
  try {
    info = await stat(cwd);
  } catch (err) {
    const code = (err as { code?: string }).code ?? "ENOENT";
    throw new SpawnCheckError(`cwd ${cwd} is not accessible (${code})`, code);
  }
  if (!info.isDirectory()) {
    throw new SpawnCheckError(`cwd ${cwd} is not a directory`, "ENOTDIR");
  }
}

/**
 * Find the executable that `execvp` would run for `program`, searching the
 * child's own `PATH` (or the libc default when it has none), relative to
 * `cwd` for names containing a slash.
 *
 * @returns the resolved path
 */
export async function resolveProgram(
  program: string,
  env: Record<string, string>,
  cwd: string,
): Promise<string> {
  if (program.length === 0) {
    throw new SpawnCheckError("argv[0] is empty", "ENOENT");
  }
  if (program.includes("/")) {
    const path = program.startsWith("/") ? program : `${cwd}/${program}`;
    await checkExecutable(path, program);
    return path;
  }
  const searchPath = env.PATH ?? "/bin:/usr/bin";
  let denied = false;
  for (const dir of searchPath.split(":")) {
    const base = dir === "" ? cwd : dir.startsWith("/") ? dir : `${cwd}/${dir}`;
    const candidate = `${base}/${program}`;
    try {
      const info = await stat(candidate);
      if (!info.isFile()) continue;
      await access(candidate, constants.X_OK);
      return candidate;
    } catch (err) {
      if ((err as { code?: string }).code === "EACCES") denied = true;
    }
  }
  if (denied) {
    throw new SpawnCheckError(`${program} is not executable`, "EACCES");
  }
  throw new SpawnCheckError(
    `${program} was not found in PATH ${JSON.stringify(searchPath)}`,
    "ENOENT",
  );
}

async function checkExecutable(path: string, program: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    const code = (err as { code?: string }).code ?? "ENOENT";
    throw new SpawnCheckError(`${program} cannot be run (${code})`, code);
  }
  if (info.isDirectory()) {
    throw new SpawnCheckError(`${program} is a directory`, "EACCES");
  }
  try {
    await access(path, constants.X_OK);
  } catch {
    throw new SpawnCheckError(`${program} is not executable`, "EACCES");
  }
}

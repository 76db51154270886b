/**
 * What the sandbox tests share: a workspace with a `.git` and a symlink to
 * a directory outside it (both away from /tmp, which the tests make
 * writable), and a way to find every process that mentions a marker.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";

/** A workspace and its surroundings. */
export interface SandboxBox {
  /** The workspace: `.git/config` inside, `link` -> {@linkcode outside}. */
  ws: string;
  /** A directory outside the workspace and outside /tmp. */
  outside: string;
  /** A file name in /tmp that does not exist yet. */
  tmpFile: string;
  /** Remove all of it. */
  cleanup(): Promise<void>;
}

/** Base of the boxes: not /tmp, so that "/tmp writable" does not reach them. */
const BASE = "/var/tmp";

/** Make a fresh {@linkcode SandboxBox}. */
export async function sandboxBox(): Promise<SandboxBox> {
  const ws = await mkdtemp(join(BASE, "exec-server-sb-ws-"));
  const outside = await mkdtemp(join(BASE, "exec-server-sb-out-"));
  await mkdir(join(ws, ".git"));
  await writeFile(join(ws, ".git/config"), "[core]\n");
  await symlink(outside, join(ws, "link"));
  const tmpFile = `/tmp/exec-server-sb-${crypto.randomUUID()}`;
  return {
    ws,
    outside,
    tmpFile,
    cleanup: async () => {
      for (const p of [ws, outside, tmpFile]) await rm(p, { recursive: true, force: true });
    },
  };
}

/**
 * Whether the sandbox tests must be skipped: bubblewrap is not installed
 * and this is not CI. Under CI they always run (and fail without it):
 * .ci/run installs it.
 */
export function bwrapMissing(): boolean {
  if (process.env.CI) return false;
  return !(process.env.PATH ?? "").split(":").some((d) => existsSync(join(d, "bwrap")));
}

/** Live pids whose command line mentions `marker` anywhere (bubblewrap's too). */
export async function pidsMentioning(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8");
      const state = (await readFile(`/proc/${name}/stat`, "utf8")).split(") ")[1]?.[0];
      if (cmdline.includes(marker) && state !== "Z") pids.push(Number(name));
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

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

/** A special path of the Codex CLI's permission entries. */
function special(kind: string, extra: Record<string, unknown> = {}) {
  return { type: "special", value: { kind, ...extra } };
}

/**
 * The `sandbox` object the Codex CLI 0.171 sends under `-s workspace-write`
 * (CODEX_CLI.md, section 3) for the workspace `ws`: the machine readable,
 * the workspace and the temporary directories writable, its `.git`,
 * `.agents` and `.codex` read-only, no network.
 */
export function codexWorkspaceWrite(ws: string, home = "/root"): Record<string, unknown> {
  const uri = `file://${ws}`;
  return {
    permissions: {
      type: "managed",
      file_system: {
        type: "restricted",
        entries: [
          { path: special("root"), access: "read" },
          { path: special("project_roots"), access: "write" },
          { path: special("slash_tmp"), access: "write" },
          { path: special("tmpdir"), access: "write" },
          ...[".git", ".agents", ".codex"].map((subpath) => ({
            path: special("project_roots", { subpath }),
            access: "read",
            missing_path_behavior: "skip",
          })),
        ],
      },
      network: "restricted",
    },
    cwd: uri,
    workspaceRoots: [uri],
    userHomeDir: `file://${home}`,
    windowsSandboxLevel: "disabled",
    windowsSandboxProxySettingsMode: "reconcile",
    useLegacyLandlock: false,
  };
}

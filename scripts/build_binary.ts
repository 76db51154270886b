/**
 * Build the single executables: one self-contained file per target that
 * needs no Deno, no Node and no node_modules where it runs.
 *
 * ```sh
 * deno task build:binary                          # this machine: dist/exec-server
 * deno task build:binary --target linux-arm64     # dist/exec-server-linux-arm64
 * deno task build:binary --target all             # the four targets
 * deno run -A scripts/build_binary.ts --if-stale  # skip when inputs are unchanged
 * ```
 *
 * Targets: `linux-x64`, `linux-arm64`, `darwin-x64`, `darwin-arm64` (a
 * comma-separated list, `all`, or `host`). Each is a Node single-executable
 * application (scripts/binary/sea_build.ts) around the official Node build
 * of one pinned version ({@linkcode EMBEDDED_NODE_VERSION}), fetched from
 * the npm registry. Beside each binary goes `<binary>.gz`, which the ssh
 * bootstrap uploads instead of the binary.
 *
 * Other flags: `--out PATH` (one target only), `--node PATH` (embed this
 * Node instead, host target only), `--no-strip`, `--if-stale`, and
 * `--via deno` (`deno compile`, host only, which needs a local denort in
 * `DENORT_BIN`; not available on this project's machines).
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { VERSION } from "../src/version.ts";
import { fetchNode } from "./binary/node_dist.ts";
import { ptyAddonFor } from "./binary/pty_addons.ts";
import { buildSea, type SeaInputs } from "./binary/sea_build.ts";
import { onPath, run } from "./binary/shell.ts";
import { checkBuilt } from "./binary/smoke.ts";
import { EMBEDDED_NODE_VERSION, hostTarget, parseTargets, type Target } from "./binary/targets.ts";

const ROOT = resolve(new URL("../", import.meta.url).pathname);

function log(msg: string): void {
  console.error(`build_binary: ${msg}`);
}

/** Every non-test TypeScript file under `dir`, sorted. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) out.push(path);
  }
  return out.sort();
}

/**
 * A digest of everything a binary is made from, so `--if-stale` can tell a
 * fresh binary from an old one without trusting file times.
 */
function inputsDigest(key: string, files: string[]): string {
  const hash = createHash("sha256");
  hash.update(`${key}\0${VERSION}\0`);
  for (
    const file of [
      ...sourceFiles(join(ROOT, "src")),
      ...sourceFiles(join(ROOT, "scripts")),
      join(ROOT, "cli.ts"),
      join(ROOT, "deno.json"),
      join(ROOT, "package-lock.json"),
      ...files,
    ]
  ) {
    hash.update(`${file}\0`);
    // Runtimes are ~100 MB: their identity is enough.
    if (existsSync(file)) {
      const st = statSync(file);
      hash.update(st.size > 16 << 20 ? `${st.size}\0${st.mtimeMs}` : readFileSync(file));
    }
  }
  return hash.digest("hex");
}

/** Options of {@linkcode buildBinary}. */
export interface BuildOptions {
  /** The target (default: this machine's). */
  target?: Target;
  /** Output path (default `dist/exec-server` for the host, else `dist/exec-server-<target>`). */
  out?: string;
  /** Host target only: embed this Node instead of the pinned one. */
  node?: string;
  /** Strip symbols from Linux builds when a strip tool exists (default true). */
  strip?: boolean;
  /** Skip the build when the binary was made from the same inputs. */
  ifStale?: boolean;
}

/** What {@linkcode buildBinary} did. */
export interface BuildResult {
  /** The binary's path. */
  path: string;
  /** How it was built and checked. */
  how: string;
  /** Its size in bytes. */
  size: number;
  /** Its gzip size in bytes. */
  gzipSize: number;
  /** True when `ifStale` found it fresh and nothing was built. */
  reused: boolean;
}

/** How this machine runs a Node of `target` to make its blob. */
function blobNodeFor(target: Target, targetNode: string): SeaInputs["blobNode"] {
  const host = hostTarget();
  if (target === host) return { command: [targetNode], sameArch: true };
  if (target === "linux-arm64" && host === "linux-x64" && onPath("qemu-aarch64-static")) {
    return {
      command: ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", targetNode],
      sameArch: true,
    };
  }
  if (!host) {
    throw new Error(`this machine (${process.platform}-${process.arch}) cannot make blobs`);
  }
  return { command: [fetchNode(host, EMBEDDED_NODE_VERSION).node], sameArch: false };
}

/** Build one target's executable (and its `.gz`). */
export async function buildBinary(opts: BuildOptions = {}): Promise<BuildResult> {
  const host = hostTarget();
  const target = opts.target ?? host;
  if (!target) throw new Error(`this machine (${process.platform}-${process.arch}) is no target`);
  if (opts.node && target !== host) throw new Error("--node applies to the host target only");
  const out = resolve(
    ROOT,
    opts.out ?? (opts.target ? `dist/exec-server-${target}` : "dist/exec-server"),
  );
  mkdirSync(join(out, ".."), { recursive: true });
  const dist = opts.node ? undefined : fetchNode(target, EMBEDDED_NODE_VERSION);
  const targetNode = opts.node ? resolve(opts.node) : dist!.node;
  const nodeVersion = opts.node
    ? run(targetNode, ["--version"], "node --version").trim().replace(/^v/, "")
    : EMBEDDED_NODE_VERSION;
  const pty = ptyAddonFor(ROOT, target, dist ?? fetchNode(target, EMBEDDED_NODE_VERSION));
  const digest = inputsDigest(`${target}\0${opts.strip ?? true}`, [targetNode, pty.addon]);
  const stamp = `${out}.inputs`;
  if (
    opts.ifStale && existsSync(out) && existsSync(`${out}.gz`) && existsSync(stamp) &&
    readFileSync(stamp, "utf8").trim() === digest
  ) {
    return {
      path: out,
      how: "unchanged inputs",
      size: statSync(out).size,
      gzipSize: statSync(`${out}.gz`).size,
      reused: true,
    };
  }
  rmSync(stamp, { force: true });
  // Built beside the target and renamed over it only once checked, so a
  // failed build never leaves a broken binary in place.
  const tmp = `${out}.${process.pid}.tmp`;
  try {
    const how = await buildSea(
      {
        root: ROOT,
        target,
        targetNode,
        blobNode: blobNodeFor(target, targetNode),
        pty,
        strip: opts.strip ?? true,
      },
      tmp,
      nodeVersion,
    );
    const checked = await checkBuilt(tmp, target);
    writeFileSync(`${tmp}.gz`, gzipSync(readFileSync(tmp), { level: 9 }));
    // The binary first: an old .gz is then older than it, which the ssh
    // bootstrap takes as stale and ignores.
    renameSync(tmp, out);
    renameSync(`${tmp}.gz`, `${out}.gz`);
    writeFileSync(stamp, `${digest}\n`);
    return {
      path: out,
      how: `${how}; ${checked}`,
      size: statSync(out).size,
      gzipSize: statSync(`${out}.gz`).size,
      reused: false,
    };
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.gz`, { force: true });
  }
}

if (import.meta.main) {
  let values;
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: {
        target: { type: "string" },
        out: { type: "string" },
        node: { type: "string" },
        via: { type: "string", default: "node" },
        "no-strip": { type: "boolean", default: false },
        "if-stale": { type: "boolean", default: false },
      },
    }).values;
    if (values.via === "deno") {
      throw new TypeError(
        "--via deno needs denort (DENORT_BIN), which cannot be fetched here; use --via node",
      );
    }
    if (values.via !== "node" && values.via !== "auto") {
      throw new TypeError(`--via must be node, got ${values.via}`);
    }
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exit(2);
  }
  try {
    const targets = values.target ? parseTargets(values.target) : [undefined];
    if (values.out && targets.length > 1) throw new TypeError("--out needs exactly one target");
    for (const target of targets) {
      const started = Date.now();
      const res = await buildBinary({
        target,
        out: values.out,
        node: values.node,
        strip: !values["no-strip"],
        ifStale: values["if-stale"],
      });
      const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
      const sizes = `${mib(res.size)}, ${mib(res.gzipSize)} gzipped (${
        (100 * res.gzipSize / res.size).toFixed(0)
      }%)`;
      if (res.reused) log(`${res.path} is up to date (${sizes})`);
      else {log(
          `built ${res.path} via ${res.how}; ${sizes} in ${
            ((Date.now() - started) / 1000).toFixed(1)
          } s`,
        );}
    }
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}

/**
 * Build `dist/exec-server`: one self-contained executable that needs no
 * Deno, no Node and no node_modules on the target.
 *
 * Two ways, chosen by `--via` (default `auto`):
 *
 * - `deno`: `deno compile`, which needs Deno's runtime template (denort).
 *   Deno downloads it unless `DENORT_BIN` names a local copy; `auto` takes
 *   this way only when `DENORT_BIN` is set or denort is already in Deno's
 *   cache, because the download fails on machines without internet access.
 * - `node`: a Node single-executable application. esbuild bundles
 *   `scripts/sea_entry.ts` into one CommonJS script, Node turns it and
 *   node-pty's addon (an asset) into a blob, and postject injects the blob
 *   into a copy of the Node binary (stripped of debug symbols when `strip`
 *   exists).
 *
 * Usage:
 *
 * ```sh
 * deno task build:binary                       # auto
 * deno run -A scripts/build_binary.ts --via node --out /tmp/exec-server
 * deno run -A scripts/build_binary.ts --if-stale   # skip when inputs are unchanged
 * ```
 *
 * Flags: `--via auto|deno|node`, `--out PATH` (default `dist/exec-server`),
 * `--node PATH` (the Node binary to embed; default `node` on PATH, or
 * `$NODE_BIN`), `--no-strip`, `--if-stale`.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import * as esbuild from "esbuild";
import { VERSION } from "../src/version.ts";
import { ADDON_FILE_NAME } from "./sea_addon.ts";

const ROOT = resolve(new URL("../", import.meta.url).pathname);
const PTY_ADDON = join(ROOT, "node_modules/node-pty/build/Release/pty.node");
/** Node's documented SEA fuse; postject flips it so Node looks for the blob. */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const POSTJECT = join(ROOT, "node_modules/postject/dist/cli.js");

/** Thrown when the build cannot proceed; the message says what to fix. */
export class BuildError extends Error {
  /** @param message what failed and why */
  constructor(message: string) {
    super(message);
    this.name = "BuildError";
  }
}

function log(msg: string): void {
  console.error(`build_binary: ${msg}`);
}

function run(cmd: string, args: string[], what: string): string {
  // The timeout only guards against a hang (e.g. a wrong binary waiting on stdin).
  const res = spawnSync(cmd, args, {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 300_000,
    maxBuffer: 64 << 20,
  });
  if (res.error) throw new BuildError(`${what}: could not run ${cmd}: ${res.error.message}`);
  if (res.status !== 0) {
    throw new BuildError(
      `${what}: ${cmd} ${args.join(" ")} exited with ${
        res.status ?? res.signal
      }\n${res.stdout}${res.stderr}`,
    );
  }
  return res.stdout;
}

/** The absolute path of `name` on PATH, or undefined. */
function which(name: string): string | undefined {
  if (name.includes("/")) return existsSync(name) ? resolve(name) : undefined;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      // not in this directory
    }
  }
  return undefined;
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
 * A digest of everything the binary is made from, so `--if-stale` can tell a
 * fresh binary from an old one without trusting file times.
 */
function inputsDigest(via: string, runtimeBinary: string): string {
  const hash = createHash("sha256");
  hash.update(`${via}\0${VERSION}\0`);
  const files = [
    ...sourceFiles(join(ROOT, "src")),
    join(ROOT, "cli.ts"),
    join(ROOT, "scripts/build_binary.ts"),
    join(ROOT, "scripts/sea_entry.ts"),
    join(ROOT, "scripts/sea_addon.ts"),
    join(ROOT, "deno.json"),
    join(ROOT, "package-lock.json"),
    PTY_ADDON,
  ];
  for (const file of files) {
    hash.update(`${file}\0`);
    if (existsSync(file)) hash.update(readFileSync(file));
  }
  // The runtime binary is ~100 MB: its identity is enough.
  const st = statSync(runtimeBinary);
  hash.update(`${runtimeBinary}\0${st.size}\0${st.mtimeMs}`);
  return hash.digest("hex");
}

/**
 * The newest glibc and libstdc++ symbol versions an ELF file needs, e.g.
 * `GLIBC_2.28, GLIBCXX_3.4.21`, via objdump when it is installed.
 */
function libcNeeds(path: string): string | undefined {
  if (!which("objdump")) return undefined;
  const res = spawnSync("objdump", ["-T", path], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (res.status !== 0) return undefined;
  const newest = (prefix: string): string | undefined => {
    const re = new RegExp(`\\b${prefix}_(\\d+(?:\\.\\d+)*)`, "g");
    const versions = [...res.stdout.matchAll(re)].map((m) => m[1].split(".").map(Number));
    versions.sort((x, y) => {
      for (let i = 0; i < Math.max(x.length, y.length); i++) {
        if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
      }
      return 0;
    });
    const last = versions.at(-1);
    return last && `${prefix}_${last.join(".")}`;
  };
  const found = [newest("GLIBC"), newest("GLIBCXX")].filter(Boolean);
  return found.length > 0 ? found.join(", ") : undefined;
}

/** Where `deno compile` would find denort without downloading it. */
function cachedDenort(deno: string): string | undefined {
  const denoDir = process.env.DENO_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? "/root", ".cache"), "deno");
  const version = run(deno, ["--version"], "deno --version").match(/deno (\S+)/)?.[1];
  if (!version) return undefined;
  const zip = join(denoDir, "dl/release", `v${version}`, "denort-x86_64-unknown-linux-gnu.zip");
  return existsSync(zip) ? zip : undefined;
}

/** `deno compile` into `tmp`. */
function buildWithDeno(deno: string, tmp: string): string {
  run(deno, [
    "compile",
    "--allow-all",
    "--include",
    "node_modules/node-pty/package.json",
    "--include",
    "node_modules/node-pty/build/Release/pty.node",
    "--output",
    tmp,
    "cli.ts",
  ], "deno compile (it needs denort: set DENORT_BIN to a local copy, or use --via node)");
  return `deno compile (${
    process.env.DENORT_BIN ? `DENORT_BIN=${process.env.DENORT_BIN}` : "cached denort"
  })`;
}

/**
 * An esbuild plugin that bundles `names` as modules that throw when loaded.
 * ws tries its optional native helpers inside try/catch; left external, the
 * SEA's require() would print a warning about non-built-in modules instead.
 */
function absentOptionalModules(names: string[]): esbuild.Plugin {
  const filter = new RegExp(`^(${names.map((n) => n.replace(/[.-]/g, "\\$&")).join("|")})$`);
  return {
    name: "absent-optional-modules",
    setup(build) {
      build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "absent" }));
      build.onLoad({ filter: /.*/, namespace: "absent" }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`${args.path} is not bundled`)});`,
        loader: "js",
      }));
    },
  };
}

/** A Node single executable into `tmpOut`. */
async function buildWithNode(node: string, tmpOut: string, strip: boolean): Promise<string> {
  const nodeVersion = run(node, ["--version"], "node --version").trim();
  const [major, minor] = nodeVersion.slice(1).split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 12)) {
    throw new BuildError(`${node} is ${nodeVersion}; SEA assets need Node >= 20.12`);
  }
  if (!readFileSync(node).includes(SEA_FUSE)) {
    throw new BuildError(`${node} has no SEA fuse ${SEA_FUSE}: it cannot host a single executable`);
  }
  if (!existsSync(PTY_ADDON)) {
    throw new BuildError(`${PTY_ADDON} is missing: run npm ci (node-pty builds it)`);
  }
  const work = join(dirname(tmpOut), `.sea-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const bundle = join(work, "exec-server.cjs");
    const result = await esbuild.build({
      entryPoints: [join(ROOT, "scripts/sea_entry.ts")],
      outfile: bundle,
      bundle: true,
      platform: "node",
      format: "cjs",
      target: `node${major}`,
      // The server never imports node-pty's JavaScript (the addon comes from
      // the SEA asset).
      external: ["node-pty"],
      plugins: [absentOptionalModules(["bufferutil", "utf-8-validate"])],
      // A SEA has no dynamic import() at all, not even of built-ins: lower
      // every import() to require().
      supported: { "dynamic-import": false },
      define: { "import.meta.url": "__execServerModuleUrl" },
      banner: {
        js: 'var __execServerModuleUrl = require("node:url").pathToFileURL(process.execPath).href;',
      },
      logLevel: "warning",
    });
    if (result.errors.length > 0) throw new BuildError("esbuild failed");
    const blob = join(work, "sea-prep.blob");
    const config = join(work, "sea-config.json");
    writeFileSync(
      config,
      JSON.stringify(
        {
          main: bundle,
          output: blob,
          disableExperimentalSEAWarning: true,
          useCodeCache: true,
          // sea_entry.ts reads the asset under the same key.
          assets: { [ADDON_FILE_NAME]: PTY_ADDON },
        },
        null,
        2,
      ),
    );
    run(node, ["--experimental-sea-config", config], "SEA blob");
    copyFileSync(node, tmpOut);
    chmodSync(tmpOut, 0o755);
    let stripped = false;
    if (strip && which("strip")) {
      run("strip", [tmpOut], "strip");
      stripped = true;
    }
    run(
      node,
      [POSTJECT, tmpOut, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE],
      "postject",
    );
    return `node single executable (${nodeVersion} from ${node}${stripped ? ", stripped" : ""})`;
  } finally {
    await esbuild.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** What {@linkcode buildBinary} did. */
export interface BuildResult {
  /** The binary's path. */
  path: string;
  /** Which way it was built, e.g. `node single executable (v20.20.2 ...)`. */
  how: string;
  /** The binary's size in bytes. */
  size: number;
  /** True when `ifStale` found the binary fresh and nothing was built. */
  reused: boolean;
}

/** Options of {@linkcode buildBinary}. */
export interface BuildOptions {
  /** `auto` (default), `deno` or `node`. */
  via?: "auto" | "deno" | "node";
  /** Output path (default `dist/exec-server` in the repository). */
  out?: string;
  /** The Node binary to embed (default `$NODE_BIN` or `node` on PATH). */
  node?: string;
  /** Strip debug symbols from the Node copy when `strip` exists (default true). */
  strip?: boolean;
  /** Skip the build when the binary was made from the same inputs. */
  ifStale?: boolean;
}

/**
 * Build the single executable.
 *
 * @throws {BuildError} when no way to build works here
 */
export async function buildBinary(opts: BuildOptions = {}): Promise<BuildResult> {
  const out = resolve(ROOT, opts.out ?? "dist/exec-server");
  mkdirSync(dirname(out), { recursive: true });
  const deno = join(ROOT, "node_modules/deno/deno");
  const denort = process.env.DENORT_BIN;
  if (denort && !existsSync(denort)) {
    throw new BuildError(`DENORT_BIN=${denort} does not exist`);
  }
  const requested = opts.via ?? "auto";
  if (requested !== "auto") return await buildVia(requested, out, deno, opts);
  if (!denort && !cachedDenort(deno)) return await buildVia("node", out, deno, opts);
  try {
    return await buildVia("deno", out, deno, opts);
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    log(`deno compile failed (${reason}); building a Node single executable instead`);
    return await buildVia("node", out, deno, opts);
  }
}

async function buildVia(
  via: "deno" | "node",
  out: string,
  deno: string,
  opts: BuildOptions,
): Promise<BuildResult> {
  const nodeName = opts.node ?? process.env.NODE_BIN ?? "node";
  const node = via === "node" ? which(nodeName) : undefined;
  if (via === "node" && !node) throw new BuildError(`no Node binary found as ${nodeName}`);
  const runtimeBinary = via === "node" ? node! : (process.env.DENORT_BIN || deno);
  const digest = inputsDigest(`${via}\0${opts.strip ?? true}`, runtimeBinary);
  const stamp = `${out}.inputs`;
  if (
    opts.ifStale && existsSync(out) && existsSync(stamp) &&
    readFileSync(stamp, "utf8").trim() === digest
  ) {
    return { path: out, how: "unchanged inputs", size: statSync(out).size, reused: true };
  }
  rmSync(stamp, { force: true });
  // Built beside the target and renamed over it only once it answers
  // --version, so a failed build never leaves a broken binary in place.
  const tmp = `${out}.${process.pid}.tmp`;
  let how: string;
  let version: string;
  try {
    how = via === "deno"
      ? buildWithDeno(deno, tmp)
      : await buildWithNode(node!, tmp, opts.strip ?? true);
    version = run(tmp, ["--version"], "smoke test of the binary").trim();
    if (!version.startsWith(`exec-server ${VERSION} (`)) {
      throw new BuildError(`the built binary's --version printed ${JSON.stringify(version)}`);
    }
    renameSync(tmp, out);
  } finally {
    rmSync(tmp, { force: true });
  }
  writeFileSync(stamp, `${digest}\n`);
  return { path: out, how: `${how}; ${version}`, size: statSync(out).size, reused: false };
}

if (import.meta.main) {
  let values;
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: {
        via: { type: "string", default: "auto" },
        out: { type: "string" },
        node: { type: "string" },
        "no-strip": { type: "boolean", default: false },
        "if-stale": { type: "boolean", default: false },
      },
    }).values;
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exit(2);
  }
  if (!["auto", "deno", "node"].includes(values.via)) {
    log(`--via must be auto, deno or node, got ${JSON.stringify(values.via)}`);
    process.exit(2);
  }
  try {
    const started = Date.now();
    const res = await buildBinary({
      via: values.via as "auto" | "deno" | "node",
      out: values.out && !isAbsolute(values.out) ? resolve(values.out) : values.out,
      node: values.node,
      strip: !values["no-strip"],
      ifStale: values["if-stale"],
    });
    const mib = (res.size / 1024 / 1024).toFixed(1);
    if (res.reused) {
      log(`${res.path} is up to date (${mib} MiB)`);
    } else {
      log(`built ${res.path} via ${res.how}`);
      log(`size ${res.size} bytes (${mib} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const binaryNeeds = libcNeeds(res.path);
      const addonNeeds = existsSync(PTY_ADDON) ? libcNeeds(PTY_ADDON) : undefined;
      if (binaryNeeds) log(`the binary needs ${binaryNeeds} on the target`);
      if (addonNeeds) log(`PTY processes also need ${addonNeeds} (node-pty's addon)`);
    }
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}

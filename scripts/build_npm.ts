/**
 * Build the npm package into `npm/`: TypeScript's compiler turns the Deno
 * sources into ESM JavaScript with `.d.ts` files under `npm/esm`, and this
 * script writes `npm/package.json` (its exports mirror deno.json's, so the
 * npm and JSR packages have the same entry points), makes `esm/cli.js` the
 * `exec-server` command, and copies README.md and LICENSE.
 *
 * node-pty is an optional dependency: it compiles a native addon at install
 * time, which fails on hosts without a C++ toolchain. Such an install still
 * gives a working client and pipe processes; only PTY starts fail, with an
 * error naming the missing addon.
 *
 * Usage: `deno task build:npm` (writes `npm/`), or
 * `deno run -A scripts/build_npm.ts --out DIR` to build elsewhere (tests do,
 * so that nothing else writing `npm/` at the same time can disturb them).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";

const ROOT = resolve(new URL("../", import.meta.url).pathname);

/** Thrown when the package cannot be built; the message says why. */
export class NpmBuildError extends Error {
  /** @param message what failed */
  constructor(message: string) {
    super(message);
    this.name = "NpmBuildError";
  }
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(ROOT, path), "utf8"));
}

/** `./src/server/mod.ts` → `./esm/src/server/mod` (no extension). */
function compiledStem(source: string): string {
  if (!source.startsWith("./") || !source.endsWith(".ts")) {
    throw new NpmBuildError(`deno.json export ${JSON.stringify(source)} is not a ./*.ts path`);
  }
  return `./esm/${source.slice(2, -3)}`;
}

/** The npm `exports` map for deno.json's `exports`. */
export function npmExports(
  denoExports: Record<string, string>,
): Record<string, { types: string; default: string } | string> {
  const out: Record<string, { types: string; default: string } | string> = {};
  for (const [key, source] of Object.entries(denoExports)) {
    const stem = compiledStem(source);
    out[key] = { types: `${stem}.d.ts`, default: `${stem}.js` };
  }
  out["./package.json"] = "./package.json";
  return out;
}

/** The contents of `npm/package.json`. */
export function npmPackageJson(): Record<string, unknown> {
  const deno = readJson("deno.json");
  const pkg = readJson("package.json");
  const denoExports = typeof deno.exports === "string"
    ? { ".": deno.exports }
    : deno.exports as Record<string, string>;
  const deps = pkg.dependencies as Record<string, string>;
  for (const name of ["node-pty", "smol-toml", "ws", "@modelcontextprotocol/server"]) {
    if (!deps[name]) throw new NpmBuildError(`package.json has no dependency on ${name}`);
  }
  const main = compiledStem(denoExports["."]);
  return {
    name: "exec-server",
    version: deno.version,
    description: pkg.description,
    license: pkg.license,
    type: "module",
    engines: pkg.engines,
    main: `${main}.js`,
    types: `${main}.d.ts`,
    exports: npmExports(denoExports),
    bin: { "exec-server": "./esm/cli.js" },
    files: ["esm/", "scripts/patch_node_pty.cjs", "README.md", "LICENSE"],
    // node-pty leaves PTY masters inheritable; see scripts/patch_node_pty.cjs.
    scripts: { postinstall: "node scripts/patch_node_pty.cjs --soft" },
    // smol-toml reads the host's Codex config for environmentConfig/read;
    // the MCP SDK serves `exec-server mcp` (loaded only by it).
    dependencies: {
      "@modelcontextprotocol/server": deps["@modelcontextprotocol/server"],
      "smol-toml": deps["smol-toml"],
      ws: deps.ws,
    },
    optionalDependencies: { "node-pty": deps["node-pty"] },
  };
}

/**
 * Build the package into `out` (default `npm/` in the repository).
 *
 * @throws {NpmBuildError} when tsc fails or an export was not produced
 */
export function buildNpm(out: string = join(ROOT, "npm")): void {
  const dest = resolve(out);
  const pkg = npmPackageJson();
  const entries = Object.values(
    pkg.exports as Record<string, { default: string } | string>,
  ).flatMap((e) => typeof e === "string" ? [] : [e.default]);
  mkdirSync(dest, { recursive: true });
  // Compile into a fresh directory, then swap it in, so that stale modules
  // of deleted sources never ship and readers see the old or the new tree.
  const staging = join(dest, `.esm-${process.pid}`);
  const config = join(dest, `.tsconfig-${process.pid}.json`);
  const sources = Object.values(
    (readJson("deno.json").exports ?? {}) as Record<string, string>,
  ).map((s) => join(ROOT, s));
  writeFileSync(
    config,
    JSON.stringify({
      extends: join(ROOT, "tsconfig.npm.json"),
      // typeRoots is pinned because the default is looked up from this
      // config's directory, which may be outside the repository.
      compilerOptions: {
        outDir: staging,
        rootDir: ROOT,
        typeRoots: [join(ROOT, "node_modules/@types")],
      },
      files: [join(ROOT, "cli.ts"), ...sources],
    }),
  );
  try {
    const tsc = spawnSync(
      "node",
      [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", config],
      { cwd: ROOT, stdio: "inherit" },
    );
    if (tsc.status !== 0) throw new NpmBuildError(`tsc failed (exit ${tsc.status})`);
    const cli = join(staging, "cli.js");
    writeFileSync(cli, `#!/usr/bin/env node\n${readFileSync(cli, "utf8")}`);
    chmodSync(cli, 0o755);
    for (const entry of entries) {
      if (!existsSync(join(staging, entry.slice("./esm/".length)))) {
        throw new NpmBuildError(`the export ${entry} was not produced by tsc`);
      }
    }
    rmSync(join(dest, "esm"), { recursive: true, force: true });
    renameSync(staging, join(dest, "esm"));
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(config, { force: true });
  }
  writeFileSync(join(dest, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  mkdirSync(join(dest, "scripts"), { recursive: true });
  copyFileSync(join(ROOT, "scripts/patch_node_pty.cjs"), join(dest, "scripts/patch_node_pty.cjs"));
  for (const doc of ["README.md", "LICENSE"]) {
    if (existsSync(join(ROOT, doc))) copyFileSync(join(ROOT, doc), join(dest, doc));
    else console.error(`build_npm: warning: ${doc} is missing, the package ships without it`);
  }
}

if (import.meta.main) {
  try {
    const { values } = parseArgs({ options: { out: { type: "string" } } });
    const out = resolve(values.out ?? join(ROOT, "npm"));
    buildNpm(out);
    console.error(`build_npm: wrote ${out} (exec-server ${npmPackageJson().version})`);
  } catch (err) {
    console.error(`build_npm: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  }
}

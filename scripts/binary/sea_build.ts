/**
 * One Node single-executable application for one target: esbuild bundles
 * the server into a CommonJS script, a Node of the embedded version turns
 * it and node-pty's addon (assets) into a blob, postject injects the blob
 * into a copy of the target's Node, which is then stripped (Linux) or
 * signed ad hoc (macOS, which refuses an arm64 binary with a broken
 * signature).
 *
 * @module
 */
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import * as esbuild from "esbuild";
import { ADDON_FILE_NAME, HELPER_FILE_NAME } from "../sea_addon.ts";
import type { PtyAddon } from "./pty_addons.ts";
import { onPath, run } from "./shell.ts";
import { hostTarget, type Target, TARGET_INFO } from "./targets.ts";

/** Node's documented SEA fuse; postject flips it so Node looks for the blob. */
export const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** What a SEA build needs. */
export interface SeaInputs {
  /** The repository. */
  root: string;
  /** The target. */
  target: Target;
  /** The target's Node binary (copied, then the blob goes into the copy). */
  targetNode: string;
  /**
   * How to run a Node of the same version on this machine, for making the
   * blob: the target's own Node (natively or under qemu) when possible,
   * which allows a code cache; else a host Node of the same version.
   */
  blobNode: { command: string[]; sameArch: boolean };
  /** node-pty's addon (and macOS helper). */
  pty: PtyAddon;
  /** Strip symbols (Linux only). */
  strip: boolean;
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

/** An esbuild plugin that bundles the file `path` wherever `name` is imported. */
function moduleInstead(name: string, path: string): esbuild.Plugin {
  const filter = new RegExp(`^${name.replace(/[.-]/g, "\\$&")}$`);
  return {
    name: `instead-of-${name}`,
    setup(build) {
      build.onResolve({ filter }, () => ({ path }));
    },
  };
}

/** Bundle the server into one CommonJS script at `bundle`. */
export async function bundleServer(root: string, bundle: string, nodeMajor: number): Promise<void> {
  try {
    const result = await esbuild.build({
      entryPoints: [join(root, "scripts/sea_entry.ts")],
      outfile: bundle,
      bundle: true,
      platform: "node",
      format: "cjs",
      target: `node${nodeMajor}`,
      // The server never imports node-pty's JavaScript (the addon comes from
      // the SEA asset).
      external: ["node-pty"],
      plugins: [
        // ws's frame unmasking a word at a time instead of a byte at a time.
        moduleInstead("bufferutil", join(root, "src/runtime/ws_bufferutil.ts")),
        absentOptionalModules(["utf-8-validate"]),
      ],
      // A SEA has no dynamic import() at all, not even of built-ins: lower
      // every import() to require().
      supported: { "dynamic-import": false },
      define: { "import.meta.url": "__execServerModuleUrl" },
      banner: {
        js: 'var __execServerModuleUrl = require("node:url").pathToFileURL(process.execPath).href;',
      },
      minify: true,
      logLevel: "warning",
    });
    if (result.errors.length > 0) throw new Error("esbuild failed");
  } finally {
    await esbuild.stop();
  }
}

/**
 * V8 flags the binary starts with. A young generation of 1 MiB semi-spaces
 * keeps streamed output's short-lived strings from growing the heap: peak
 * RSS over the bench's spawn and throughput rounds 97 -> 77 MiB, with the
 * same throughput (measured with `node --max-semi-space-size=1`).
 */
export const NODE_EXEC_ARGV: readonly string[] = ["--max-semi-space-size=1"];

/** The blob for `bundle`, made by a Node of the embedded version. */
function makeBlob(work: string, bundle: string, inputs: SeaInputs): string {
  const blob = join(work, "sea-prep.blob");
  const config = join(work, "sea-config.json");
  const assets: Record<string, string> = { [ADDON_FILE_NAME]: inputs.pty.addon };
  if (inputs.pty.helper) assets[HELPER_FILE_NAME] = inputs.pty.helper;
  writeFileSync(
    config,
    JSON.stringify({
      main: bundle,
      output: blob,
      disableExperimentalSEAWarning: true,
      // A code cache is V8's for one architecture: only made by the target's own Node.
      useCodeCache: inputs.blobNode.sameArch,
      execArgv: NODE_EXEC_ARGV,
      assets,
    }),
  );
  const [cmd, ...args] = inputs.blobNode.command;
  // The same flags as at run time: V8 rejects a code cache made under others.
  run(cmd, [...args, ...NODE_EXEC_ARGV, "--experimental-sea-config", config], "SEA blob", work);
  return blob;
}

/**
 * Build the executable into `out`.
 *
 * @returns a description of how, for the build's log
 */
export async function buildSea(
  inputs: SeaInputs,
  out: string,
  nodeVersion: string,
): Promise<string> {
  const info = TARGET_INFO[inputs.target];
  if (!readFileSync(inputs.targetNode).includes(SEA_FUSE)) {
    throw new Error(`${inputs.targetNode} has no SEA fuse: it cannot host a single executable`);
  }
  const work = join(dirname(out), `.sea-${inputs.target}-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const bundle = join(work, "exec-server.cjs");
    await bundleServer(inputs.root, bundle, Number(nodeVersion.split(".")[0]));
    const blob = makeBlob(work, bundle, inputs);
    copyFileSync(inputs.targetNode, out);
    chmodSync(out, 0o755);
    const notes = [`node v${nodeVersion}`, inputs.pty.origin];
    if (!inputs.blobNode.sameArch) notes.push("no code cache (made on another architecture)");
    const strip = info.os === "linux" && inputs.strip ? stripTool(inputs.target) : undefined;
    if (strip) {
      run(strip, [out], "strip");
      notes.push("stripped");
    }
    const postject = join(inputs.root, "node_modules/postject/dist/cli.js");
    const machO = info.os === "darwin" ? ["--macho-segment-name", "NODE_SEA"] : [];
    run(
      "node",
      [postject, out, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE, ...machO],
      "postject",
    );
    if (info.os === "darwin") {
      const { adhocSign } = await import("../macho_sign.ts");
      writeFileSync(out, adhocSign(readFileSync(out), "exec-server"));
      notes.push("signed ad hoc");
    }
    return `node single executable for ${inputs.target} (${notes.join(", ")})`;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The `strip` for a Linux target, when installed. */
function stripTool(target: Target): string | undefined {
  const tool = target === hostTarget()
    ? "strip"
    : target === "linux-arm64"
    ? "aarch64-linux-gnu-strip"
    : undefined;
  return tool && onPath(tool) ? tool : undefined;
}

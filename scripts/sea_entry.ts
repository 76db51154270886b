/**
 * Entry point of the Node single-executable build (`dist/exec-server`),
 * bundled to CommonJS by `scripts/build_binary.ts`.
 *
 * Before handing over to the CLI it installs the two hooks the server looks
 * for: `globalThis.__execServerSea` (so `--version` can say it runs as a
 * single executable) and `globalThis.__execServerPtyNative`, which loads
 * node-pty's addon from the binary's embedded asset on the first PTY start,
 * so that pipe-only sessions never touch the disk.
 *
 * @module
 */
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { main } from "../src/cli/main.ts";
import { type NativePty, PtyUnavailableError } from "../src/process/pty_native.ts";
import { VERSION } from "../src/version.ts";
import {
  ADDON_FILE_NAME,
  type AddonExtra,
  AddonExtractionError,
  HELPER_FILE_NAME,
  loadEmbeddedAddon,
} from "./sea_addon.ts";

/** The part of `node:sea` used here (Node >= 20.12). */
interface SeaApi {
  isSea(): boolean;
  getRawAsset(key: string): ArrayBuffer;
}

// The source is an ES module with no require() of its own; node:sea is built in,
// so the path createRequire is anchored at does not matter.
const sea = createRequire(process.execPath)("node:sea") as SeaApi;

/** node-pty's `spawn-helper` when the build embedded one (macOS), else none. */
function helperExtras(): AddonExtra[] {
  try {
    return [{
      name: HELPER_FILE_NAME,
      bytes: new Uint8Array(sea.getRawAsset(HELPER_FILE_NAME)),
      mode: 0o700,
    }];
  } catch {
    return [];
  }
}

function loadPtyAddon(): NativePty {
  // getRawAsset avoids a copy; the bytes are only read, never written.
  const bytes = new Uint8Array(sea.getRawAsset(ADDON_FILE_NAME));
  const extras = helperExtras();
  let home: string;
  try {
    home = homedir();
  } catch {
    // No HOME and no passwd entry: the cache is skipped, the temp dir remains.
    home = "/nonexistent";
  }
  try {
    return loadEmbeddedAddon(bytes, {
      version: VERSION,
      xdgCacheHome: process.env.XDG_CACHE_HOME,
      home,
      tmp: tmpdir(),
      uid: process.getuid?.(),
    }, (path) => {
      const mod = { exports: {} as unknown };
      process.dlopen(mod, path);
      const native = mod.exports as NativePty;
      if (extras.length > 0) native.helperPath = join(dirname(path), HELPER_FILE_NAME);
      return native;
    }, extras);
  } catch (err) {
    if (err instanceof AddonExtractionError) {
      // PtyUnavailableError names the paths; the cause keeps only the reasons.
      const reasons = err.attempts.map((a) => a.error instanceof Error ? a.error.message : a.error);
      throw new PtyUnavailableError(err.attempts.map((a) => a.path), new Error(reasons.join("; ")));
    }
    throw err;
  }
}

const hooks = globalThis as {
  __execServerSea?: SeaApi;
  __execServerPtyNative?: () => NativePty;
};
hooks.__execServerSea = sea;
hooks.__execServerPtyNative = loadPtyAddon;

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`exec-server: ${err instanceof Error ? err.stack : err}`);
    process.exit(1);
  },
);

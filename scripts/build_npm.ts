/**
 * Build the npm package into `npm/`: TypeScript's compiler turns the Deno
 * sources into ESM JavaScript with `.d.ts` files.
 *
 * Usage: deno task build:npm
 */
import { spawnSync } from "node:child_process";
import process from "node:process";

const root = new URL("../", import.meta.url).pathname;
const tsc = spawnSync("node", ["node_modules/typescript/bin/tsc", "-p", "tsconfig.npm.json"], {
  cwd: root,
  stdio: "inherit",
});
if (tsc.status !== 0) {
  console.error("build_npm: tsc failed");
  process.exit(tsc.status ?? 1);
}
console.error("build_npm: wrote npm/esm");

/**
 * The version is written in three places (src/version.ts, deno.json,
 * package.json); they must agree, and the server must report it.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { VERSION } from "../src/version.ts";
import { ROOT, serverCommand, TestServer } from "./harness.ts";

function versionIn(file: string): string {
  return JSON.parse(readFileSync(`${ROOT}${file}`, "utf8")).version;
}

Deno.test("VERSION equals the deno.json and package.json versions", () => {
  assert.match(VERSION, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  assert.equal(versionIn("deno.json"), VERSION);
  assert.equal(versionIn("package.json"), VERSION);
});

Deno.test("--version prints VERSION and initialize reports it", async () => {
  const [cmd, ...rest] = serverCommand();
  const out = spawnSync(cmd, [...rest, "--version"], { encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout, new RegExp(`^exec-server ${VERSION.replaceAll(".", "\\.")} \\(`));
  await using s = new TestServer();
  const init = await s.request("initialize", { clientName: "version" });
  assert.deepEqual(init.result.serverInfo, { name: "exec-server", version: VERSION });
});

/**
 * Write-behind, black-box, from source: the Deno server (through its FFI)
 * and the npm build under Node (through node-pty's patched addon). The
 * shipped builds (the binaries, the installed npm package) run the same
 * check among their core checks.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { checkWriteBehind } from "./core_checks.ts";
import { denoServerCommand, nodeServerCommand, TestServer } from "./harness.ts";
import { withTempDir } from "./server_helpers.ts";

for (
  const [name, command] of [["Deno", denoServerCommand], [
    "the npm build under Node",
    nodeServerCommand,
  ]] as const
) {
  Deno.test({
    name: `write-behind: ${name} drops the pages of pieces written 8 MiB before`,
    ignore: process.platform !== "linux",
    fn: async () => {
      await withTempDir(async (dir) => {
        await using s = await TestServer.start([], { command: command() });
        assert.equal(await checkWriteBehind(s, dir), true, "no positional writes offered");
        assert.equal((await s.close()).code, 0);
        assert.deepEqual(s.badLines, []);
      }, "write-behind-test-");
    },
  });
}

/**
 * The binaries for other platforms, built here: linux-arm64 run for real
 * under qemu (the same core checks the x64 binary passes), and the macOS
 * ones checked for what can be checked without a Mac: a Mach-O for the
 * right CPU, the server's blob and node-pty's files inside, and a valid
 * ad-hoc signature.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { Buffer } from "node:buffer";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { VERSION } from "../src/version.ts";
import { parseCodeSignature, verifyCodeSignature } from "../scripts/macho_sign.ts";
import { ensureTargetBinary, targetBinary } from "./binary_fixture.ts";
import { runCoreChecks } from "./core_checks.ts";
import { TestServer } from "./harness.ts";

const QEMU = "/usr/bin/qemu-aarch64-static";
const SYSROOT = "/usr/aarch64-linux-gnu";
/** Under CI nothing may skip: .ci/run installs qemu and the arm64 sysroot. */
const noQemu = !process.env.CI && !(existsSync(QEMU) && existsSync(SYSROOT));

Deno.test({
  name: "linux-arm64 binary under qemu: --version and the core checks",
  ignore: noQemu,
  fn: async () => {
    await ensureTargetBinary("linux-arm64");
    const bin = targetBinary("linux-arm64");
    const command = [QEMU, "-L", SYSROOT, bin];
    const version = execFileSync(command[0], [...command.slice(1), "--version"], {
      encoding: "utf8",
      env: { PATH: "/usr/bin:/bin" },
    });
    assert.match(
      version,
      new RegExp(`^exec-server ${VERSION} \\(node v\\d+\\.\\d+\\.\\d+ \\(single executable\\)\\)`),
    );
    const dir = await mkdtemp(join(tmpdir(), "exec-server-arm64-"));
    try {
      await using s = await TestServer.start([], { command, env: { HOME: dir } });
      const ran = await runCoreChecks(s, { env: { PATH: "/usr/bin:/bin" }, dir });
      assert.deepEqual(ran, [
        "handshake",
        "pipe",
        "pty echo",
        "terminate",
        "fs round trip",
        "write-behind",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
});

for (const [target, cpu] of [["darwin-arm64", 0x0100000c], ["darwin-x64", 0x01000007]] as const) {
  Deno.test(`${target} binary: a Mach-O for the right CPU with the server inside, signed`, async () => {
    await ensureTargetBinary(target);
    const bytes = new Uint8Array(await readFile(targetBinary(target)));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    assert.equal(view.getUint32(0, true), 0xfeedfacf, "64-bit Mach-O magic");
    assert.equal(view.getUint32(4, true), cpu, "CPU type");
    assert.equal(view.getUint32(12, true), 2, "MH_EXECUTE");
    const text = Buffer.from(bytes);
    // postject sets the fuse once the blob is in, in a NODE_SEA segment.
    assert.ok(text.includes("NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2:1"), "SEA fuse set");
    assert.ok(text.includes("NODE_SEA\0"), "NODE_SEA segment");
    // The server's bundle and node-pty's files are in the blob.
    for (const marker of ["exec-server.v0", "sandboxUnavailable", "spawn-helper", "pty.node"]) {
      assert.ok(text.includes(marker), `${marker} inside`);
    }
    const verdict = verifyCodeSignature(bytes);
    assert.deepEqual(verdict.problems, []);
    assert.ok(verdict.ok);
    const signature = parseCodeSignature(bytes);
    assert.ok(signature, "a code signature");
  });
}

/**
 * The server's stdio pipes, black-box: every build (Deno from source, the
 * npm build under Node, the binary) asks Linux for 1 MiB pipes
 * (src/runtime/pipe_size.ts): Deno at once through its FFI, Node through
 * node-pty's patched addon and only once a pipe proves busy, so that a
 * server that only ever sees small messages never loads the addon for it.
 * The sizes are read from the test's own end of each pipe
 * (`F_GETPIPE_SZ`, through Deno's FFI); the bytes must pass intact.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import process from "node:process";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { b64, denoServerCommand, nodeServerCommand, TestServer, unb64Bytes } from "./harness.ts";
import { withTempDir } from "./server_helpers.ts";

/** `F_GETPIPE_SZ` on Linux. */
const F_GETPIPE_SZ = 1032;
const DEFAULT_PIPE = 64 * 1024;
const ENLARGED_PIPE = 1024 * 1024;

const libc = process.platform === "linux"
  ? Deno.dlopen("libc.so.6", { fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" } })
  : undefined;

/** The buffer size of the pipe under a `node:child_process` stream. */
function pipeSize(stream: unknown): number {
  const fd = (stream as { _handle: { fd: number } })._handle.fd;
  return libc!.symbols.fcntl(fd, F_GETPIPE_SZ, 0);
}

/** Both stdio pipes' sizes: [stdin, stdout]. */
function sizes(s: TestServer): [number, number] {
  return [pipeSize(s.child.stdin), pipeSize(s.child.stdout)];
}

/** A 3 MiB upload (one message far over 64 KiB) and its download, checked byte for byte. */
async function bigRoundTrip(s: TestServer, dir: string): Promise<void> {
  const data = new Uint8Array(randomBytes(3 * 1024 * 1024));
  const path = `${dir}/big.bin`;
  const wrote = await s.request("fs/writeFile", { path, dataBase64: b64(data) });
  assert.equal(wrote.error, undefined, JSON.stringify(wrote.error));
  // Buffer.equals, not deepEqual: the diff of two big arrays takes gigabytes to print.
  assert.ok(Buffer.from(await readFile(path)).equals(data), "the file's bytes differ");
  const read = await s.request("fs/readFile", { path });
  assert.equal(read.error, undefined, JSON.stringify(read.error));
  assert.ok(Buffer.from(unb64Bytes(read.result.dataBase64)).equals(data), "read bytes differ");
}

const builds: Array<[string, () => Promise<string[]>, "eager" | "when busy"]> = [
  ["Deno (source)", () => Promise.resolve(denoServerCommand()), "eager"],
  ["npm build under Node", () => Promise.resolve(nodeServerCommand()), "when busy"],
  ["binary", async () => (await ensureBinary(), [DIST_BINARY]), "when busy"],
];

for (const [name, command, when] of builds) {
  Deno.test({
    name: `stdio pipes: ${name} asks for 1 MiB pipes (${when})`,
    ignore: !libc,
    fn: async () => {
      await withTempDir(async (dir) => {
        await using s = await TestServer.start([], { command: await command() });
        // The handshake is a few hundred bytes each way.
        const small: [number, number] = when === "eager"
          ? [ENLARGED_PIPE, ENLARGED_PIPE]
          : [DEFAULT_PIPE, DEFAULT_PIPE];
        assert.deepEqual(sizes(s), small, "after the handshake [stdin, stdout]");
        await bigRoundTrip(s, dir);
        assert.deepEqual(sizes(s), [ENLARGED_PIPE, ENLARGED_PIPE], "after 3 MiB each way");
        await bigRoundTrip(s, dir);
        assert.equal((await s.close()).code, 0);
        assert.deepEqual(s.badLines, []);
      }, "stdio-pipes-test-");
    },
  });
}

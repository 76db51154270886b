import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { isPipeOrSocket } from "./fd_readable.ts";

const MODULE = new URL("./fd_readable.ts", import.meta.url).href;

/**
 * A child that opens its stdin with fdReadable, reads nothing for `holdMs`,
 * then reads everything and prints the byte count and the sha256: chunks
 * copied out of the reused read buffer must not change afterwards.
 */
const CHILD = `
import { createHash } from "node:crypto";
import { fdReadable } from "${MODULE}";
const holdMs = Number(process.argv[2]);
const stream = fdReadable(0);
await new Promise((r) => setTimeout(r, holdMs));
const chunks = [];
for await (const chunk of stream) chunks.push(chunk);
const hash = createHash("sha256");
let bytes = 0;
for (const c of chunks) { hash.update(c); bytes += c.byteLength; }
console.log(JSON.stringify({ bytes, sha256: hash.digest("hex") }));
`;

/** The same runtime as the test: Deno or Node. */
function runtimeArgv(script: string): string[] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  return deno ? [deno.execPath(), "run", "-A", script] : [process.execPath, script];
}

Deno.test("fdReadable: a consumer that lags pauses reading, and nothing is lost", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fd-readable-"));
  try {
    const script = join(dir, "child.mjs");
    await writeFile(script, `import process from "node:process";\n${CHILD}`);
    const [cmd, ...args] = runtimeArgv(script);
    const child = spawn(cmd, [...args, "1500"], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => out += d);
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));

    // Write until the pipe stops taking bytes while the child holds off.
    const total = 32 * 1024 * 1024;
    const expected = createHash("sha256");
    let accepted = 0;
    let written = 0;
    const writeAll = (async () => {
      while (written < total) {
        // Pieces of odd sizes and changing contents, so that a chunk that
        // still pointed into the reused buffer would show.
        const piece = new Uint8Array(48 * 1024 + 7).fill(written % 251);
        const part = piece.subarray(0, Math.min(piece.byteLength, total - written));
        expected.update(part);
        written += part.byteLength;
        await new Promise<void>((r) => child.stdin.write(part, () => r()));
        accepted = written;
      }
      child.stdin.end();
    })();
    await new Promise((r) => setTimeout(r, 1000));
    // 16 queued chunks of 64 KiB and the pipe's own buffer, with room to spare.
    assert.ok(accepted < 6 * 1024 * 1024, `the child took ${accepted} bytes while not reading`);
    await writeAll;
    assert.equal(await exited, 0);
    assert.deepEqual(JSON.parse(out), { bytes: total, sha256: expected.digest("hex") });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("isPipeOrSocket: pipes and sockets yes, files no", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fd-readable-"));
  try {
    const script = join(dir, "probe.mjs");
    await writeFile(
      script,
      `import { isPipeOrSocket } from "${MODULE}";\nconsole.log(isPipeOrSocket(0), isPipeOrSocket(1));\n`,
    );
    const [cmd, ...args] = runtimeArgv(script);
    const run = (stdin: "pipe" | number) =>
      new Promise<string>((resolve) => {
        const c = spawn(cmd, args, { stdio: [stdin, "pipe", "inherit"] });
        let s = "";
        c.stdout!.setEncoding("utf8").on("data", (d: string) => s += d);
        c.on("exit", () => resolve(s.trim()));
        if (stdin === "pipe") c.stdin!.end();
      });
    assert.equal(await run("pipe"), "true true");
    const fd = openSync(script, "r");
    try {
      assert.equal(await run(fd), "false true");
    } finally {
      closeSync(fd);
    }
    assert.equal(isPipeOrSocket(-1), false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { isPipeOrSocket } from "./fd_reader.ts";

const MODULE = new URL("./fd_reader.ts", import.meta.url).href;

/**
 * A child that reads its stdin with readFd into targets of changing sizes
 * (one of them the tail of a bigger buffer, as a payload's rest is), takes
 * one read, pauses for `holdMs`, then reads everything and prints the byte
 * count and the sha256 of what landed in the targets.
 */
const CHILD = `
import { createHash } from "node:crypto";
import { readFd } from "${MODULE}";
const holdMs = Number(process.argv[2]);
const big = new Uint8Array(300 * 1024);
const targets = [new Uint8Array(7), new Uint8Array(64 * 1024 + 3), big.subarray(1000)];
const hash = createHash("sha256");
let bytes = 0;
let reads = 0;
let target;
const reading = readFd(0, {
  target: () => (target = targets[reads % targets.length]),
  filled(n) {
    if (n > target.byteLength) throw new Error("read past the target");
    hash.update(target.subarray(0, n));
    bytes += n;
    reads += 1;
    if (reads === 1) setTimeout(() => reading.resume(), holdMs);
    return reads !== 1;
  },
  end(err) {
    if (err) throw err;
    console.log(JSON.stringify({ bytes, sha256: hash.digest("hex"), manyReads: reads > 100 }));
  },
});
`;

/** The same runtime as the test: Deno or Node. */
function runtimeArgv(script: string): string[] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  return deno ? [deno.execPath(), "run", "-A", script] : [process.execPath, script];
}

Deno.test("readFd: bytes land in the targets given, a paused sink holds reading back, nothing is lost", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fd-reader-"));
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
    // The pipe's own buffer (1 MiB at most here), with room to spare.
    assert.ok(accepted < 4 * 1024 * 1024, `the child took ${accepted} bytes while paused`);
    await writeAll;
    assert.equal(await exited, 0);
    assert.deepEqual(JSON.parse(out), {
      bytes: total,
      sha256: expected.digest("hex"),
      manyReads: true,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("isPipeOrSocket: pipes and sockets yes, files no", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fd-reader-"));
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

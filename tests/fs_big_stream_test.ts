/**
 * A big file streamed up and down through the client library, over stdio
 * and over a websocket, against the real server: the bytes arrive intact
 * (sha256), the server's memory stays bounded while they pass, and an
 * aborted upload leaves nothing behind.
 *
 * The file is 256 MiB; `EXEC_SERVER_BIG_FILE_MIB=1024` asks for 1 GiB.
 * Throughput is printed, never asserted.
 */
import assert from "node:assert/strict";
import { createHash, randomFillSync } from "node:crypto";
import { open, readdir, readFile, rm } from "node:fs/promises";
import process from "node:process";
import { Environment, ExecServerClient, type FileSystem } from "../mod.ts";
import { ROOT, serverCommand } from "./harness.ts";
import { withTempDir } from "./server_helpers.ts";
import { WsServer } from "./ws_fixture.ts";

const MiB = 1024 * 1024;
const FILE_MIB = Number(process.env.EXEC_SERVER_BIG_FILE_MIB ?? 256);
/** The most the server's RSS may grow while a transfer runs. */
const MAX_RSS_GROWTH_MIB = 64;

/** A connected client and the pid of the server process behind it. */
interface Connected {
  client: ExecServerClient;
  serverPid: number;
  close(): Promise<void>;
}

/** The server on stdio, started through `sh` so that its pid is known. */
async function overStdio(dir: string): Promise<Connected> {
  const pidFile = `${dir}/server.pid`;
  const [cmd, ...args] = serverCommand();
  const client = await ExecServerClient.spawnStdio(
    "sh",
    ["-c", `echo $$ > '${pidFile}'; exec "$@"`, "sh", cmd, ...args],
    { cwd: ROOT },
  );
  const serverPid = Number((await readFile(pidFile, "utf8")).trim());
  return { client, serverPid, close: () => client.close() };
}

/** The server on a websocket, with its generated token. */
async function overWebSocket(): Promise<Connected> {
  const server = await WsServer.start(["--listen", "ws://127.0.0.1:0"]);
  const client = await ExecServerClient.connectWebSocket(server.url, {
    token: server.generatedToken,
  });
  return {
    client,
    serverPid: server.child.pid!,
    close: async () => {
      await client.close();
      await server.stop();
    },
  };
}

/** Resident memory of `pid` in MiB. */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** Run `work` while sampling the server's RSS; returns its growth over the start, in MiB. */
async function rssGrowthDuring(pid: number, work: () => Promise<void>): Promise<number> {
  const base = await rssMiB(pid);
  let peak = base;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMiB(pid).catch(() => peak));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    await work();
  } finally {
    sampling = false;
    await sampler;
  }
  return Math.max(peak, await rssMiB(pid)) - base;
}

/** Write `mib` MiB of random bytes to `path`; returns their sha256. */
async function randomFile(path: string, mib: number): Promise<string> {
  const hash = createHash("sha256");
  const block = new Uint8Array(MiB);
  const file = await open(path, "w");
  try {
    for (let i = 0; i < mib; i++) {
      randomFillSync(block);
      hash.update(block);
      await file.write(block);
    }
  } finally {
    await file.close();
  }
  return hash.digest("hex");
}

/** sha256 and length of a stream. */
async function digest(stream: ReadableStream<Uint8Array>): Promise<[string, number]> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  return [hash.digest("hex"), bytes];
}

const rate = (ms: number) => `${(FILE_MIB / (ms / 1000)).toFixed(0)} MiB/s`;

/** Upload `source` to `target` and download it again; prints the figures. */
async function roundTrip(
  label: string,
  remote: FileSystem,
  serverPid: number,
  source: string,
  target: string,
  expected: string,
): Promise<void> {
  const local = Environment.local().fs;
  let t0 = performance.now();
  const upGrowth = await rssGrowthDuring(serverPid, async () => {
    await local.readStream(source).pipeTo(remote.writeStream(target));
  });
  const upMs = performance.now() - t0;
  assert.equal((await digest(local.readStream(target)))[0], expected, "uploaded bytes");
  t0 = performance.now();
  let down: [string, number] = ["", 0];
  const downGrowth = await rssGrowthDuring(serverPid, async () => {
    down = await digest(remote.readStream(target));
  });
  const downMs = performance.now() - t0;
  assert.deepEqual(down, [expected, FILE_MIB * MiB], "downloaded bytes");
  console.log(
    `${label}, ${FILE_MIB} MiB: up ${rate(upMs)} (server RSS +${upGrowth.toFixed(1)} MiB), ` +
      `down ${rate(downMs)} (server RSS +${downGrowth.toFixed(1)} MiB)`,
  );
  assert.ok(upGrowth <= MAX_RSS_GROWTH_MIB, `server RSS grew ${upGrowth} MiB during the upload`);
  assert.ok(downGrowth <= MAX_RSS_GROWTH_MIB, `server RSS grew ${downGrowth} MiB on download`);
}

/** An upload aborted midway, and one whose source fails, leave no file and no temp file. */
async function abortedUploads(remote: FileSystem, dir: string): Promise<void> {
  const writer = remote.writeStream(`${dir}/aborted.bin`).getWriter();
  for (let i = 0; i < 8; i++) await writer.write(new Uint8Array(MiB).fill(i));
  await writer.abort(new Error("the user cancelled"));
  let sent = 0;
  const failing = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      if (sent++ < 8) controller.enqueue(new Uint8Array(MiB));
      else controller.error(new Error("the source broke"));
    },
  });
  await assert.rejects(failing.pipeTo(remote.writeStream(`${dir}/broken.bin`)), /source broke/);
  const left = (await readdir(dir)).filter((n) => !n.endsWith(".pid") && n !== "source.bin");
  assert.deepEqual(left, [], "neither the files nor their .partial temp files remain");
}

for (const [label, connect] of [["stdio", overStdio], ["websocket", overWebSocket]] as const) {
  Deno.test(`fs streams: a ${FILE_MIB} MiB file up and down over ${label}`, async () => {
    await withTempDir(async (dir) => {
      const expected = await randomFile(`${dir}/source.bin`, FILE_MIB);
      const conn = await connect(dir);
      try {
        await roundTrip(
          label,
          conn.client.fs,
          conn.serverPid,
          `${dir}/source.bin`,
          `${dir}/copy.bin`,
          expected,
        );
        await rm(`${dir}/copy.bin`);
        await abortedUploads(conn.client.fs, dir);
      } finally {
        await conn.close();
      }
    }, "fs-big-stream-test-");
  });
}

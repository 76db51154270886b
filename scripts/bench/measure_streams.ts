/**
 * A big file streamed up and down through the client library
 * (`FileSystem.writeStream` / `readStream`), over stdio and, for this
 * project's server, over a websocket, with the server's RSS growth during
 * each transfer. Floor: the same file copied locally with the same streams.
 * A server without ranged reads and writes (the upstream one) gets no rows.
 *
 * @module
 */
import { randomFillSync } from "node:crypto";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Environment, ExecServerClient, type FileSystem } from "../../mod.ts";
import { type BenchConfig, MiB } from "./config.ts";
import { type Report, rssMiB } from "./report.ts";

/** A connected client and the pid of the server behind it. */
interface Connected {
  client: ExecServerClient;
  serverPid: number;
  close(): Promise<void>;
}

/** The stream rows: 1 GiB (quick: 256 MiB) up and down, stdio then websocket. */
export async function measureStreams(cfg: BenchConfig, rep: Report): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-streams-"));
  const bytes = cfg.quick ? 256 * MiB : 1024 * MiB;
  try {
    const source = join(dir, "source.bin");
    await writeRandomFile(source, bytes);
    const floor = await copyRate(Environment.local().fs, source, join(dir, "floor.bin"), bytes);
    const ways: [string, () => Promise<Connected>][] = [["stdio", () => overStdio(cfg, dir)]];
    if (!cfg.codex) ways.push(["websocket", () => overWebSocket(cfg)]);
    for (const [label, connect] of ways) {
      let conn: Connected;
      try {
        conn = await connect();
      } catch (err) {
        // The upstream server speaks only the Codex CLI's dialect.
        console.error(`fs streams: skipped, the client library cannot use this server: ${err}`);
        return;
      }
      try {
        if (conn.client.capabilities.fs === undefined) {
          console.error(`fs streams: the server announces no ranged reads; skipped`);
          return;
        }
        await measureOne(label, conn, source, join(dir, "copy.bin"), bytes, floor, rep);
      } finally {
        await conn.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureOne(
  label: string,
  conn: Connected,
  source: string,
  target: string,
  bytes: number,
  floor: number,
  rep: Report,
): Promise<void> {
  const local = Environment.local().fs;
  const remote = conn.client.fs;
  const size = `${bytes / MiB} MiB`;
  const up = await sampled(conn.serverPid, () => pipe(local, source, remote, target));
  const down = await sampled(conn.serverPid, () => drain(remote, target));
  for (const [dir, r] of [["up", up], ["down", down]] as const) {
    const rate = bytes / MiB / (r.ms / 1000);
    rep.add({
      name: `fs stream ${dir} ${size} (${label})`,
      unit: "MiB/s",
      value: rate,
      floor,
      floorName: "local stream copy",
    });
    rep.add({ name: `  server RSS growth, ${dir} (${label})`, unit: "MiB", value: r.growth });
  }
}

/** Run `work`, sampling the server's RSS; its duration and the RSS growth. */
async function sampled(pid: number, work: () => Promise<void>) {
  const base = rssMiB(pid);
  let peak = base;
  const timer = setInterval(() => peak = Math.max(peak, rssMiB(pid)), 20);
  const t0 = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  const ms = performance.now() - t0;
  return { ms, growth: Math.max(peak, rssMiB(pid)) - base };
}

async function pipe(from: FileSystem, src: string, to: FileSystem, dst: string): Promise<void> {
  await from.readStream(src).pipeTo(to.writeStream(dst));
}

async function drain(fs: FileSystem, path: string): Promise<void> {
  for await (const _ of fs.readStream(path)) { /* read and drop */ }
}

/** The local floor: the same streams between two local files, in MiB/s. */
async function copyRate(fs: FileSystem, src: string, dst: string, bytes: number) {
  const t0 = performance.now();
  await pipe(fs, src, fs, dst);
  return bytes / MiB / ((performance.now() - t0) / 1000);
}

async function writeRandomFile(path: string, bytes: number): Promise<void> {
  const block = new Uint8Array(MiB);
  const file = await open(path, "w");
  try {
    for (let at = 0; at < bytes; at += MiB) await file.write(randomFillSync(block));
  } finally {
    await file.close();
  }
}

/** The server on stdio, started through `sh` so that its pid is known. */
async function overStdio(cfg: BenchConfig, dir: string): Promise<Connected> {
  const pidFile = join(dir, "server.pid");
  const client = await ExecServerClient.spawnStdio(
    "sh",
    ["-c", `echo $$ > '${pidFile}'; exec "$@"`, "sh", ...cfg.serverCmd],
  );
  const serverPid = Number((await readFile(pidFile, "utf8")).trim());
  return { client, serverPid, close: () => client.close() };
}

/** The server listening on a websocket on loopback, with its generated token. */
async function overWebSocket(cfg: BenchConfig): Promise<Connected> {
  const [cmd, ...args] = cfg.serverCmd;
  const child = spawn(cmd, [...args, "--listen", "ws://127.0.0.1:0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  const listening = new Promise<[string, string]>((resolve, reject) => {
    child.stderr!.on("data", (d: string) => {
      stderr += d;
      const url = /listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
      const token = /auth token: (\S+)/.exec(stderr)?.[1];
      if (url && token) resolve([url, token]);
    });
    child.once("exit", () => reject(new Error(`websocket server exited:\n${stderr}`)));
  });
  const [url, token] = await listening;
  const client = await ExecServerClient.connectWebSocket(url, { token });
  return {
    client,
    serverPid: child.pid!,
    close: async () => {
      await client.close();
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

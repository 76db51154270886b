/**
 * The filesystem measurements: `fs/writeFile` and `fs/readFile` of a
 * 64 MiB file, and `fs/getMetadata` latency, each against the same
 * operation done directly. A server without the fs methods gets no fs
 * rows rather than failing the whole run.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchConfig, FILE_BYTES, MiB } from "./config.ts";
import { directFileRead, directFileWrite, directStatMs } from "./floors.ts";
import { type Report, stats } from "./report.ts";
import { b64Len, type Conn } from "./rpc_client.ts";

/** The fs rows, in a temporary directory removed afterwards. */
export async function measureFilesystem(c: Conn, cfg: BenchConfig, rep: Report): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-fs-"));
  try {
    const file = join(dir, "data.bin");
    if (await measureWriteReadFile(c, cfg, rep, file)) await measureGetMetadata(c, cfg, rep, file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `fs/writeFile` then `fs/readFile` of the same file each round, with both
 * floors after them. Write and read share one loop so that every read is
 * of a file the server has just written. Returns false, reporting nothing,
 * when the server lacks the methods.
 */
export async function measureWriteReadFile(
  c: Conn,
  cfg: BenchConfig,
  rep: Report,
  file: string,
): Promise<boolean> {
  const payload = new Uint8Array(FILE_BYTES);
  for (let i = 0; i < payload.length; i += 4096) payload[i] = i & 0xff;
  const b64 = Buffer.from(payload).toString("base64");
  const wr: number[] = [];
  const rd: number[] = [];
  const rdFloor: number[] = [];
  const wrFloor: number[] = [];
  for (let i = 0; i < (cfg.quick ? 2 : 4); i++) {
    try {
      const t0 = performance.now();
      if (c.dialect === "codex") {
        // The upstream server closes the connection on an 89 MB request,
        // so in its dialect the file is written here and only read there.
        writeFileSync(file, payload);
      } else {
        await c.call("fs/writeFile", { path: file, dataBase64: b64 });
        wr.push((FILE_BYTES / MiB) / ((performance.now() - t0) / 1000));
      }
      const t1 = performance.now();
      const r = await c.call("fs/readFile", { path: file });
      if (b64Len(r.dataBase64) !== FILE_BYTES) throw new Error("short read");
      rd.push((FILE_BYTES / MiB) / ((performance.now() - t1) / 1000));
    } catch (err) {
      console.error(`fs methods unavailable: ${err}`);
      return false;
    }
    rdFloor.push(await directFileRead(file, FILE_BYTES));
    wrFloor.push(await directFileWrite(file, payload));
  }
  const rows: [string, number[], number[], string][] = [
    ["fs/writeFile 64 MiB", wr, wrFloor, "direct write+fsync"],
    ["fs/readFile 64 MiB", rd, rdFloor, "direct file read"],
  ];
  for (const [name, values, floors, floorName] of rows) {
    if (values.length === 0) continue;
    rep.add({
      name,
      unit: "MiB/s",
      value: stats(values).median,
      floor: stats(floors).median,
      floorName,
    });
  }
  return true;
}

/** `fs/getMetadata` of `file`, one call at a time; floor: a direct stat. */
export async function measureGetMetadata(
  c: Conn,
  cfg: BenchConfig,
  rep: Report,
  file: string,
): Promise<void> {
  const md: number[] = [];
  const mdFloor: number[] = [];
  for (let i = 0; i < (cfg.quick ? 50 : 300); i++) {
    const t0 = performance.now();
    await c.call("fs/getMetadata", { path: file });
    md.push(performance.now() - t0);
    mdFloor.push(await directStatMs(file));
  }
  const mdS = stats(md);
  rep.add({
    name: "fs/getMetadata latency",
    unit: "ms",
    value: mdS.median,
    p95: mdS.p95,
    floor: stats(mdFloor).median,
    floorName: "direct stat",
  });
}

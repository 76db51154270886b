/**
 * Black-box tests of **[ext]** binary frames (docs/protocol.md): the real
 * server, under Deno and as the npm build under Node, driven over stdio
 * and a websocket by a raw client written here (no code shared with the
 * server): the announcement, uploads and downloads whose bytes are raw,
 * v0 answers unchanged, and bad frames refused with the connection alive.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Buffer } from "node:buffer";
import { denoServerCommand, nodeServerCommand, ROOT } from "./harness.ts";
import { withTempDir } from "./server_helpers.ts";
import { WsServer } from "./ws_fixture.ts";

/** A message as received: its JSON, and the payload when it came as a binary frame. */
interface Received {
  // deno-lint-ignore no-explicit-any
  msg: Record<string, any>;
  payload?: { field: string; bytes: Uint8Array };
}

/** Every byte value, newlines and `#` among them, in 300 KB. */
const PAYLOAD = new Uint8Array(300_000).map((_, i) => (i * 31 + (i >> 8)) % 256);

/** The bytes of `#<n> <field> <json>\n<payload>`. */
function frame(json: unknown, field: string, payload: Uint8Array): Uint8Array {
  const head = Buffer.from(`#${payload.length} ${field} ${JSON.stringify(json)}\n`);
  return Buffer.concat([head, payload]);
}

/** Splits a server's stdout into messages: JSON lines, and headers with their payloads. */
class StdoutReader {
  #buf = Buffer.alloc(0);
  #got: Received[] = [];
  #wake: (() => void) | undefined;

  constructor(child: ChildProcess) {
    child.stdout!.on("data", (chunk: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, chunk]);
      this.#parse();
      this.#wake?.();
    });
  }

  #parse(): void {
    while (true) {
      const nl = this.#buf.indexOf(0x0a);
      if (nl === -1) return;
      const line = this.#buf.subarray(0, nl).toString("utf8");
      const m = /^#(\d+) (\w+) (.*)$/.exec(line);
      if (!m) {
        this.#got.push({ msg: JSON.parse(line) });
        this.#buf = this.#buf.subarray(nl + 1);
        continue;
      }
      const n = Number(m[1]);
      if (this.#buf.length < nl + 1 + n) return;
      const bytes = new Uint8Array(this.#buf.subarray(nl + 1, nl + 1 + n));
      this.#got.push({ msg: JSON.parse(m[3]), payload: { field: m[2], bytes } });
      this.#buf = this.#buf.subarray(nl + 1 + n);
    }
  }

  /** The message answering `id`, waiting for it. */
  async answer(id: number, ms = 20_000): Promise<Received> {
    const deadline = Date.now() + ms;
    while (true) {
      const found = this.#got.find((r) => r.msg.id === id);
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`no answer to ${id}: ${JSON.stringify(this.#got)}`);
      }
      await new Promise<void>((r) => {
        this.#wake = r;
        setTimeout(r, 100);
      });
    }
  }

  /** Every message without an id (unattributed errors). */
  unattributed(): Received[] {
    return this.#got.filter((r) => r.msg.id === null);
  }
}

/** A server on stdio, initialized; `send` writes raw bytes. */
async function stdioServer(
  cmd: string[],
  args: string[] = [],
): Promise<{
  send(bytes: Uint8Array | string): void;
  out: StdoutReader;
  caps: Record<string, unknown>;
  close(): Promise<void>;
}> {
  const child = spawn(cmd[0], [...cmd.slice(1), ...args], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const out = new StdoutReader(child);
  const send = (bytes: Uint8Array | string) => void child.stdin!.write(bytes);
  send('{"id":1,"method":"initialize","params":{"clientName":"binary-frames-test"}}\n');
  const init = await out.answer(1);
  send('{"method":"initialized"}\n');
  const exited = new Promise((r) => child.on("exit", r));
  return {
    send,
    out,
    caps: init.msg.result.capabilities,
    close: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}

const servers = [["deno", denoServerCommand], ["node", nodeServerCommand]] as const;

for (const [runtime, command] of servers) {
  Deno.test(`binary frames over stdio (${runtime}): announced, raw bytes both ways, v0 unchanged`, async () => {
    await withTempDir(async (dir) => {
      const s = await stdioServer(command());
      try {
        assert.equal(s.caps.binaryFrames, true);
        // An upload as a binary frame, then a plain line right behind it.
        s.send(frame(
          { id: 2, method: "fs/writeFile", params: { path: `${dir}/up.bin` } },
          "dataBase64",
          PAYLOAD,
        ));
        s.send('{"id":3,"method":"fs/getMetadata","params":{"path":"/"}}\n');
        assert.deepEqual((await s.out.answer(2)).msg, { id: 2, result: {} });
        assert.equal((await s.out.answer(3)).msg.result.isDirectory, true);
        assert.deepEqual(new Uint8Array(await readFile(`${dir}/up.bin`)), PAYLOAD);
        // Appended in place, as the library's streams do.
        s.send(frame(
          { id: 4, method: "fs/writeFile", params: { path: `${dir}/up.bin`, append: true } },
          "dataBase64",
          PAYLOAD.subarray(0, 10),
        ));
        assert.deepEqual((await s.out.answer(4)).msg, { id: 4, result: {} });
        assert.equal((await readFile(`${dir}/up.bin`)).length, PAYLOAD.length + 10);

        // A download asked for as a binary frame; ranged, with size and eof.
        s.send(
          `${
            JSON.stringify({
              id: 5,
              method: "fs/readFile",
              params: { path: `${dir}/up.bin`, binaryFrame: true },
            })
          }\n`,
        );
        const whole = await s.out.answer(5);
        assert.deepEqual(whole.msg, { id: 5, result: {} });
        assert.equal(whole.payload?.field, "dataBase64");
        assert.deepEqual(whole.payload?.bytes.subarray(0, PAYLOAD.length), PAYLOAD);
        const ranged = { path: `${dir}/up.bin`, offset: 5, length: 7, binaryFrame: true };
        s.send(`${JSON.stringify({ id: 6, method: "fs/readFile", params: ranged })}\n`);
        const part = await s.out.answer(6);
        assert.deepEqual(part.msg.result, { size: PAYLOAD.length + 10, eof: false });
        assert.deepEqual(part.payload?.bytes, PAYLOAD.subarray(5, 12));

        // Without binaryFrame, exactly the v0 answer.
        await writeFile(`${dir}/small`, "hello\n");
        s.send(
          `${JSON.stringify({ id: 7, method: "fs/readFile", params: { path: `${dir}/small` } })}\n`,
        );
        assert.deepEqual(await s.out.answer(7), {
          msg: { id: 7, result: { dataBase64: Buffer.from("hello\n").toString("base64") } },
        });
      } finally {
        await s.close();
      }
    }, "binary-frames-test-");
  });

  Deno.test(`binary frames over stdio (${runtime}): bad frames are refused, the connection lives on`, async () => {
    await withTempDir(async (dir) => {
      const s = await stdioServer(command(), ["--max-message-bytes", "65536"]);
      try {
        // The field is in the JSON already: the payload has no place.
        s.send(frame(
          { id: 2, method: "fs/writeFile", params: { path: `${dir}/x`, dataBase64: "aGk=" } },
          "dataBase64",
          new Uint8Array([1, 2, 3]),
        ));
        const placed = await s.out.answer(2);
        assert.equal(placed.msg.error.code, -32600);
        assert.match(placed.msg.error.message, /payload has no place/);
        // A payload over the limit is skipped, whatever bytes it holds.
        s.send(frame(
          { id: 3, method: "fs/writeFile", params: { path: `${dir}/y` } },
          "dataBase64",
          new Uint8Array(100_000).fill(0x0a),
        ));
        s.send('{"id":4,"method":"fs/getMetadata","params":{"path":"/"}}\n');
        assert.equal((await s.out.answer(4)).msg.result.isDirectory, true);
        const [tooLarge] = s.out.unattributed();
        assert.match(tooLarge.msg.error.message, /100000 bytes exceeds the limit of 65536/);
        await assert.rejects(readFile(`${dir}/y`), /ENOENT/);
        await assert.rejects(readFile(`${dir}/x`), /ENOENT/);
      } finally {
        await s.close();
      }
    }, "binary-frames-test-");
  });

  Deno.test(`binary frames over a websocket (${runtime}): one binary message each way`, async () => {
    await withTempDir(async (dir) => {
      const server = await WsServer.start(["--listen", "ws://127.0.0.1:0"], command());
      const socket = new WebSocket(server.url, {
        headers: { Authorization: `Bearer ${server.generatedToken}` },
      } as never);
      socket.binaryType = "arraybuffer";
      const got: Received[] = [];
      socket.onmessage = (ev) => {
        if (typeof ev.data === "string") {
          got.push({ msg: JSON.parse(ev.data) });
          return;
        }
        const bytes = new Uint8Array(ev.data as ArrayBuffer);
        const nl = bytes.indexOf(0x0a);
        const m = /^#(\d+) (\w+) (.*)$/.exec(new TextDecoder().decode(bytes.subarray(0, nl)))!;
        assert.equal(Number(m[1]), bytes.length - nl - 1);
        got.push({
          msg: JSON.parse(m[3]),
          payload: { field: m[2], bytes: bytes.subarray(nl + 1) },
        });
      };
      const answer = async (id: number): Promise<Received> => {
        for (let i = 0; i < 400; i++) {
          const found = got.find((r) => r.msg.id === id);
          if (found) return found;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`no answer to ${id}`);
      };
      try {
        await new Promise((r) => socket.onopen = r);
        socket.send('{"id":1,"method":"initialize","params":{"clientName":"ws"}}');
        assert.equal((await answer(1)).msg.result.capabilities.binaryFrames, true);
        socket.send('{"method":"initialized"}');
        socket.send(frame(
          { id: 2, method: "fs/writeFile", params: { path: `${dir}/ws.bin` } },
          "dataBase64",
          PAYLOAD,
        ));
        assert.deepEqual((await answer(2)).msg, { id: 2, result: {} });
        socket.send(JSON.stringify({
          id: 3,
          method: "fs/readFile",
          params: { path: `${dir}/ws.bin`, binaryFrame: true },
        }));
        const read = await answer(3);
        assert.deepEqual(read.msg, { id: 3, result: {} });
        assert.deepEqual(read.payload?.bytes, PAYLOAD);
      } finally {
        socket.close();
        await server.stop();
      }
    }, "binary-frames-test-");
  });
}

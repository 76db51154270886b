/**
 * The npm build under Node hands `ws` (from node_modules, without a native
 * `bufferutil`) the word-at-a-time masking of src/runtime/ws_bufferutil.ts,
 * and frames still arrive intact: a Node script lends it, loads `ws`,
 * echoes messages of awkward sizes through a real server and client, and
 * checks every byte. Lent after `ws` has loaded, it changes nothing.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { nodeServerCommand, ROOT } from "./harness.ts";

const MODULE = `${ROOT}npm/esm/src/runtime/ws_bufferutil.js`;

const ECHO = `
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
const { lendToWs, unmask } = await import(${JSON.stringify(MODULE)});
const require = createRequire(${JSON.stringify(MODULE)});
const wsPath = require.resolve("ws");
const lentFirst = process.argv[2] === "lend-first";
const lent = lentFirst ? lendToWs() : undefined;
const { WebSocketServer, WebSocket } = (await import(pathToFileURL(wsPath).href)).default;
const lentLate = lentFirst ? undefined : lendToWs();
const util = require(wsPath.replace(/index\\.js$/, "lib/buffer-util.js"));
const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
server.on("connection", (s) => s.on("message", (data) => s.send(data)));
await new Promise((r) => server.on("listening", r));
const client = new WebSocket("ws://127.0.0.1:" + server.address().port);
await new Promise((r) => client.on("open", r));
const echoed = [];
for (const size of [0, 3, 31, 32, 33, 4099, (1 << 20) + 3]) {
  const sent = randomBytes(size);
  const back = new Promise((r) => client.once("message", r));
  client.send(sent);
  echoed.push(Buffer.compare(Buffer.from(await back), sent) === 0);
}
client.close();
server.close();
console.log(JSON.stringify({ lent, lentLate, ours: util.unmask === unmask, echoed }));
`;

async function runEcho(order: "lend-first" | "load-first"): Promise<Record<string, unknown>> {
  const [node] = nodeServerCommand();
  const dir = await mkdtemp(join(tmpdir(), "ws-masking-"));
  try {
    const script = join(dir, "echo.mjs");
    await writeFile(script, ECHO);
    const { stdout } = await promisify(execFile)(node, [script, order], { timeout: 30_000 });
    return JSON.parse(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const INTACT = [true, true, true, true, true, true, true];

Deno.test("ws under Node: lent before it loads, it masks by words and frames arrive intact", async () => {
  assert.deepEqual(await runEcho("lend-first"), { lent: true, ours: true, echoed: INTACT });
});

Deno.test("ws under Node: lent after it loaded, nothing changes and frames arrive intact", async () => {
  assert.deepEqual(await runEcho("load-first"), { lentLate: false, ours: false, echoed: INTACT });
});

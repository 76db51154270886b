/**
 * The client library in session mode: `connectWebSocket(url, { resume:
 * true })` rides out a dropped connection. A relay cuts the websocket in
 * the middle of a command; the client reconnects, resumes, and the spawned
 * handle's output arrives whole and in order, then its exit.
 */
import assert from "node:assert/strict";
import { ExecServerClient } from "../mod.ts";
import { Relay, startTokenServer } from "./codex_cli_fixture.ts";

const TOKEN = "client-resume-test-token-0123456789";

Deno.test("client session mode: a dropped websocket is resumed, output and exit carry on", async () => {
  const [server, stop] = await startTokenServer(TOKEN, ["--session-grace-ms", "20000"]);
  const relay = await new Relay(server.url, { Authorization: `Bearer ${TOKEN}` }).start();
  const problems: string[] = [];
  const client = await ExecServerClient.connectWebSocket(relay.url, {
    token: TOKEN,
    resume: true,
    onProblem: (m) => problems.push(m),
  });
  try {
    assert.match(client.sessionId!, /^[0-9a-f-]{36}$/);
    const p = await client.spawn({
      argv: ["sh", "-c", "for i in $(seq 1 60); do echo line-$i; sleep 0.02; done; exit 5"],
    });
    let text = "";
    let cut = false;
    for await (const chunk of p.output) {
      text += new TextDecoder().decode(chunk.data);
      if (!cut) {
        cut = true;
        relay.cut();
      }
    }
    const exit = await p.wait();
    assert.equal(exit.exitCode, 5);
    const expected = Array.from({ length: 60 }, (_, i) => `line-${i + 1}\n`).join("");
    assert.equal(text, expected);
    assert.ok(problems.some((m) => /resumed session/.test(m)), problems.join("\n"));
    assert.ok(relay.seen("initialize").some((m) => m.params.session?.resume === client.sessionId));
    // The resumed connection serves new work, files included.
    assert.equal((await client.run(["echo", "after"])).stdout, "after\n");
    assert.ok((await client.fs.getMetadata("/tmp")).isDirectory);
  } finally {
    await client.close();
    await relay.close();
    await stop();
  }
});

Deno.test("client session mode: writes and a refused write in a session", async () => {
  const [server, stop] = await startTokenServer(TOKEN);
  const client = await ExecServerClient.connectWebSocket(server.url, {
    token: TOKEN,
    resume: true,
  });
  try {
    const cat = await client.spawn({ argv: ["cat"], pipeStdin: true });
    await cat.write("hello\n");
    await cat.closeStdin();
    const r = await cat.wait();
    assert.equal(r.exitCode, 0);
    await assert.rejects(cat.write("late"), /exited|closed/);
    const { stdout } = await client.run(["sh", "-c", "read x; echo got-$x"], { stdin: "it\n" });
    assert.equal(stdout, "got-it\n");
    const killed = await client.spawn({ argv: ["sleep", "30"] });
    await killed.terminate();
    const k = await killed.wait();
    assert.equal(k.exitCode, 137);
    assert.equal(k.signal, "SIGKILL");
  } finally {
    await client.close();
    await stop();
  }
});

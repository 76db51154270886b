import assert from "node:assert/strict";
import { parseMcpArgs, parseMcpListen } from "./mcp_args.ts";

Deno.test("mcp args: defaults are stdio, this host, no sandbox", () => {
  const o = parseMcpArgs([]);
  assert.deepEqual(o.listen, { kind: "stdio" });
  assert.deepEqual(o.target, { kind: "local" });
  assert.equal(o.sandbox, null);
  assert.equal(o.readOnly, false);
  assert.equal(o.stripAnsi, false);
});

Deno.test("mcp args: --listen http:// takes a host, port and path (default /mcp)", () => {
  assert.deepEqual(parseMcpListen("http://127.0.0.1:8765/mcp"), {
    kind: "http",
    hostname: "127.0.0.1",
    port: 8765,
    path: "/mcp",
  });
  assert.deepEqual(parseMcpListen("http://[::1]:0"), {
    kind: "http",
    hostname: "::1",
    port: 0,
    path: "/mcp",
  });
  assert.throws(() => parseMcpListen("http://127.0.0.1/mcp"), /needs a port/);
  assert.throws(() => parseMcpListen("ws://127.0.0.1:1"), /stdio:\/\/ or http:\/\//);
  assert.throws(() => parseMcpListen("http://127.0.0.1:70000/"), /not a valid URL/);
});

Deno.test("mcp args: targets, and flags that need one", () => {
  assert.deepEqual(parseMcpArgs(["--connect", "ws://h:1", "--connect-token-file", "/t"]).target, {
    kind: "ws",
    url: "ws://h:1",
    tokenFile: "/t",
  });
  assert.deepEqual(parseMcpArgs(["--ssh", "me@box", "--ssh-option", "Port=2222"]).target, {
    kind: "ssh",
    destination: "me@box",
    sshOptions: ["Port=2222"],
    remoteBinary: undefined,
    bootstrap: undefined,
  });
  assert.throws(() => parseMcpArgs(["--ssh", "a", "--connect", "ws://b:1"]), /exclude each other/);
  assert.throws(() => parseMcpArgs(["--ssh-option", "Port=1"]), /--ssh-option needs --ssh/);
  assert.throws(() => parseMcpArgs(["--ssh", "a", "--ssh-option=-p"]), /KEY=VALUE, got "-p"/);
  assert.throws(() => parseMcpArgs(["--connect", "http://x"]), /ws:\/\/ or wss:\/\//);
  assert.throws(() => parseMcpArgs(["--connect-token-file", "/t"]), /needs --connect/);
});

Deno.test("mcp args: --write implies the sandbox; paths must be absolute", () => {
  const o = parseMcpArgs(["--write", "/srv", "--deny", "/srv/.env", "--allow-network"]);
  assert.deepEqual(o.sandbox, { write: ["/srv"], deny: ["/srv/.env"], network: true });
  assert.deepEqual(parseMcpArgs(["--sandbox"]).sandbox, { write: [], deny: [], network: false });
  assert.throws(() => parseMcpArgs(["--allow-network"]), /needs --sandbox/);
  assert.throws(
    () => parseMcpArgs(["--write", "rel"]),
    /--write must be an absolute path, got "rel"/,
  );
  assert.throws(() => parseMcpArgs(["--root", "rel"]), /--root must be an absolute path/);
  assert.throws(() => parseMcpArgs(["--token-file", "/t"]), /need --listen http/);
  assert.throws(() => parseMcpArgs(["--bogus"]), /bogus/);
});

import assert from "node:assert/strict";
import { parseCliArgs, parseListen, UsageError } from "./args.ts";

Deno.test("parseCliArgs: defaults", () => {
  const o = parseCliArgs([]);
  assert.equal(o.help, false);
  assert.equal(o.version, false);
  assert.deepEqual(o.listen, { kind: "stdio" });
  assert.equal(o.maxOutputBytes, undefined);
  assert.equal(o.exitedRetentionMs, undefined);
  assert.equal(o.shutdownGraceMs, 2000);
  assert.equal(o.logLevel, "warn");
  assert.equal(o.noAuth, false);
  assert.deepEqual(o.allowOrigins, []);
});

Deno.test("parseCliArgs: every flag", () => {
  const o = parseCliArgs([
    "--listen=ws://127.0.0.1:0",
    "--max-output-bytes",
    "2M",
    "--exited-retention-ms",
    "300",
    "--max-processes",
    "8",
    "--max-message-bytes",
    "4096",
    "--max-read-file-bytes",
    "1G",
    "--exit-drain-ms",
    "0",
    "--output-high-water-bytes",
    "64K",
    "--shutdown-grace-ms",
    "100",
    "--log-level",
    "debug",
    "--max-connections",
    "3",
    "--token-file",
    "/tmp/token",
    "--no-auth",
    "--allow-origin",
    "https://a.example",
    "--allow-origin",
    "https://b.example",
  ]);
  assert.deepEqual(o.listen, { kind: "ws", hostname: "127.0.0.1", port: 0 });
  assert.equal(o.maxOutputBytes, 2 * 1024 * 1024);
  assert.equal(o.exitedRetentionMs, 300);
  assert.equal(o.maxProcesses, 8);
  assert.equal(o.maxMessageBytes, 4096);
  assert.equal(o.maxReadFileBytes, 1024 ** 3);
  assert.equal(o.exitDrainMs, 0);
  assert.equal(o.outputHighWaterBytes, 64 * 1024);
  assert.equal(o.shutdownGraceMs, 100);
  assert.equal(o.logLevel, "debug");
  assert.equal(o.maxConnections, 3);
  assert.equal(o.tokenFile, "/tmp/token");
  assert.equal(o.noAuth, true);
  assert.deepEqual(o.allowOrigins, ["https://a.example", "https://b.example"]);
});

Deno.test("parseCliArgs: --help, -h, --version, -V", () => {
  assert.equal(parseCliArgs(["--help"]).help, true);
  assert.equal(parseCliArgs(["-h"]).help, true);
  assert.equal(parseCliArgs(["--version"]).version, true);
  assert.equal(parseCliArgs(["-V"]).version, true);
});

Deno.test("parseCliArgs: size suffixes K, M, G in any case, with optional i and B", () => {
  const size = (text: string) => parseCliArgs(["--max-output-bytes", text]).maxOutputBytes;
  assert.equal(size("1"), 1);
  assert.equal(size("1K"), 1024);
  assert.equal(size("3k"), 3072);
  assert.equal(size("1KB"), 1024);
  assert.equal(size("1KiB"), 1024);
  assert.equal(size("5M"), 5 * 1024 ** 2);
  assert.equal(size("1mib"), 1024 ** 2);
  assert.equal(size("2G"), 2 * 1024 ** 3);
});

Deno.test("parseCliArgs: bad numbers name the flag and the value", () => {
  const cases: [string[], RegExp][] = [
    [["--max-output-bytes", "1.5K"], /--max-output-bytes must be a whole number, got "1.5K"/],
    [["--max-output-bytes", "abc"], /got "abc"/],
    [["--max-output-bytes", "1T"], /got "1T"/],
    [["--max-output-bytes", "0"], /--max-output-bytes must be at least 1, got "0"/],
    [["--max-processes", "0"], /--max-processes must be at least 1/],
    [["--max-message-bytes", "1000"], /--max-message-bytes must be at least 1024, got "1000"/],
    [["--output-high-water-bytes", "10"], /at least 1024/],
    [["--exited-retention-ms=-5"], /--exited-retention-ms must be a whole number, got "-5"/],
    [["--max-output-bytes", "99999999999999999999"], /--max-output-bytes is too large/],
  ];
  for (const [args, message] of cases) {
    assert.throws(
      () => parseCliArgs(args),
      (e) => e instanceof UsageError && message.test(e.message),
    );
  }
});

Deno.test("parseCliArgs: unknown flags, positionals, missing values and log levels", () => {
  assert.throws(() => parseCliArgs(["--frobnicate"]), UsageError);
  assert.throws(() => parseCliArgs(["serve"]), UsageError);
  assert.throws(() => parseCliArgs(["--listen"]), UsageError);
  assert.throws(
    () => parseCliArgs(["--log-level", "loud"]),
    (e) => e instanceof UsageError && /--log-level must be one of .*got "loud"/.test(e.message),
  );
  for (const level of ["off", "error", "warn", "info", "debug"]) {
    assert.equal(parseCliArgs(["--log-level", level]).logLevel, level);
  }
});

Deno.test("parseListen: stdio", () => {
  assert.deepEqual(parseListen("stdio://"), { kind: "stdio" });
  assert.deepEqual(parseListen("stdio"), { kind: "stdio" });
});

Deno.test("parseListen: ws://HOST:PORT with names, IPv4 and IPv6", () => {
  assert.deepEqual(parseListen("ws://127.0.0.1:0"), { kind: "ws", hostname: "127.0.0.1", port: 0 });
  assert.deepEqual(parseListen("ws://localhost:8080"), {
    kind: "ws",
    hostname: "localhost",
    port: 8080,
  });
  assert.deepEqual(parseListen("ws://[::1]:0"), { kind: "ws", hostname: "::1", port: 0 });
  assert.deepEqual(parseListen("ws://[::]:9000/"), { kind: "ws", hostname: "::", port: 9000 });
  assert.deepEqual(parseListen("ws://0.0.0.0:0/"), { kind: "ws", hostname: "0.0.0.0", port: 0 });
  // URL parsing drops the scheme's default port; it must still count.
  assert.deepEqual(parseListen("ws://0.0.0.0:80"), { kind: "ws", hostname: "0.0.0.0", port: 80 });
});

Deno.test("parseListen: rejected addresses name the value", () => {
  const cases: [string, RegExp][] = [
    ["ws://localhost", /needs a port .*"ws:\/\/localhost"/],
    ["ws://[::1]", /needs a port/],
    ["ws://h:0/path", /takes no path or query, got "ws:\/\/h:0\/path"/],
    ["ws://h:0?x=1", /takes no path or query/],
    ["http://h:1", /must be stdio:\/\/ or ws:\/\/HOST:PORT, got "http:\/\/h:1"/],
    ["wss://h:1", /must be stdio:\/\/ or ws:\/\/HOST:PORT/],
    ["tcp://h:1", /must be stdio/],
    ["", /must be stdio/],
    ["ws://h:99999", /not a valid URL: "ws:\/\/h:99999"/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => parseListen(text),
      (e) => e instanceof UsageError && message.test(e.message),
      text,
    );
  }
});

import assert from "node:assert/strict";
import { DENIAL_TAIL_BYTES, OutputTail, sandboxDenied } from "./denial.ts";

const exit = (exitCode: number, signal: string | null = null) => ({ exitCode, signal });
const encode = (text: string) => new TextEncoder().encode(text);

const FILE_MESSAGES = [
  "touch: cannot touch '/etc/x': Read-only file system\n",
  "bash: /root/.bashrc: Permission denied\n",
  "mkdir: cannot create directory '/sys/x': Operation not permitted\n",
  "Error: EROFS: read-only file system, open '/usr/x'\n",
  "Error: EACCES: permission denied, open '/root/x'\n",
];

const NETWORK_MESSAGES = [
  "curl: (7) Failed to connect to example.com port 80: Connection refused\n",
  "ping: connect: Network is unreachable\n",
  "curl: (6) Could not resolve host: example.com\n",
  "Temporary failure in name resolution\n",
  "Error: getaddrinfo EAI_AGAIN registry.npmjs.org\n",
];

Deno.test("sandboxDenied: a denied write on exit 1 or 2", () => {
  for (const code of [1, 2]) {
    for (const text of FILE_MESSAGES) {
      assert.ok(sandboxDenied(exit(code), text, false), `${code}: ${text}`);
      assert.ok(sandboxDenied(exit(code), text, true), `${code} with network: ${text}`);
    }
  }
});

Deno.test("sandboxDenied: the words match in any case and anywhere in the tail", () => {
  assert.ok(sandboxDenied(exit(1), "PERMISSION DENIED", false));
  assert.ok(sandboxDenied(exit(1), "line 1\nwrite failed: read-only FILE system\nline 3\n", false));
  assert.ok(sandboxDenied(exit(128), "Operation not permitted", false), "128 is an exit status");
});

Deno.test("sandboxDenied: never on success", () => {
  for (const text of [...FILE_MESSAGES, ...NETWORK_MESSAGES]) {
    assert.ok(!sandboxDenied(exit(0), text, false), text);
  }
});

Deno.test("sandboxDenied: an ordinary failure is not a denial", () => {
  assert.ok(!sandboxDenied(exit(3), "", false));
  assert.ok(!sandboxDenied(exit(1), "", false));
  assert.ok(!sandboxDenied(exit(1), "error: no such file or directory\n", false));
  assert.ok(!sandboxDenied(exit(2), "grep: unmatched (\n", false));
});

Deno.test("sandboxDenied: never when a signal ended the process", () => {
  for (const text of FILE_MESSAGES) {
    assert.ok(!sandboxDenied(exit(137, "SIGKILL"), text, false), text);
    assert.ok(!sandboxDenied(exit(1, "SIGTERM"), text, false), text);
  }
});

Deno.test("sandboxDenied: never for exit codes above 128", () => {
  for (const code of [129, 137, 143, 255]) {
    assert.ok(!sandboxDenied(exit(code), "Permission denied", false), String(code));
  }
});

Deno.test("sandboxDenied: network words count only with the network restricted", () => {
  for (const text of NETWORK_MESSAGES) {
    assert.ok(sandboxDenied(exit(1), text, false), text);
    assert.ok(!sandboxDenied(exit(1), text, true), text);
  }
});

Deno.test("sandboxDenied: errno names count only as whole words", () => {
  assert.ok(sandboxDenied(exit(1), "failed with EPERM", false));
  assert.ok(sandboxDenied(exit(1), "connect ECONNREFUSED 127.0.0.1:5432", false));
  assert.ok(!sandboxDenied(exit(1), "XEPERMS", false));
  assert.ok(!sandboxDenied(exit(1), "ECONNREFUSEDX", false));
});

Deno.test("OutputTail: empty, then the whole output while it is short", () => {
  const tail = new OutputTail();
  assert.equal(tail.text(), "");
  tail.push(encode("hello "));
  tail.push(encode("world"));
  assert.equal(tail.text(), "hello world");
});

Deno.test("OutputTail: keeps only the last DENIAL_TAIL_BYTES across chunks", () => {
  const tail = new OutputTail();
  let all = "";
  for (let i = 0; i < 1000; i++) {
    const chunk = `chunk ${i} `.padEnd(17 + (i % 13), "x") + "\n";
    all += chunk;
    tail.push(encode(chunk));
  }
  const text = tail.text();
  assert.equal(text.length, DENIAL_TAIL_BYTES);
  assert.equal(text, all.slice(-DENIAL_TAIL_BYTES));
  assert.ok(text.endsWith("chunk 999 ".padEnd(17 + (999 % 13), "x") + "\n"));
});

Deno.test("OutputTail: a chunk larger than the window is cut to its end", () => {
  const tail = new OutputTail();
  tail.push(encode("a".repeat(100)));
  tail.push(encode("b".repeat(DENIAL_TAIL_BYTES * 3) + "END"));
  const text = tail.text();
  assert.equal(text.length, DENIAL_TAIL_BYTES);
  assert.ok(text.endsWith("bbbEND"));
  assert.ok(!text.includes("a"));
});

Deno.test("OutputTail: the last words of an output survive many chunks after a denial", () => {
  const tail = new OutputTail();
  tail.push(encode("early: Permission denied\n"));
  for (let i = 0; i < 500; i++) tail.push(encode("noise ".repeat(10) + "\n"));
  assert.ok(!tail.text().includes("Permission denied"));
  tail.push(encode("late: Read-only file system\n"));
  assert.ok(sandboxDenied(exit(1), tail.text(), false));
});

Deno.test("OutputTail: decodes UTF-8, also split across chunks", () => {
  const tail = new OutputTail();
  const bytes = encode("écrire: accès refusé ✓ 🙂");
  tail.push(bytes.subarray(0, 1));
  tail.push(bytes.subarray(1, 11));
  tail.push(bytes.subarray(11));
  assert.equal(tail.text(), "écrire: accès refusé ✓ 🙂");
});

Deno.test("OutputTail: multi-byte text past the window stays within it", () => {
  const tail = new OutputTail();
  for (let i = 0; i < 2000; i++) tail.push(encode("é✓"));
  tail.push(encode("fin"));
  const text = tail.text();
  assert.ok(text.length <= DENIAL_TAIL_BYTES);
  assert.ok(text.endsWith("é✓é✓fin"));
});

Deno.test("OutputTail: keeps a copy, so the reader may reuse its buffer", () => {
  const tail = new OutputTail();
  const reused = encode("Read-only file system\n");
  tail.push(reused);
  reused.fill(0x20);
  assert.equal(tail.text(), "Read-only file system\n");
});

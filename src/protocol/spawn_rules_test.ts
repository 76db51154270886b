import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "./errors.ts";
import { checkStartParams, checkTerminalSize } from "./spawn_rules.ts";

const base = { processId: "p", argv: ["ls"], cwd: "/tmp", env: {}, tty: false };

function refused(params: unknown, message: RegExp, code: number = ErrorCode.InvalidParams): void {
  assert.throws(() => checkStartParams(params), (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("checkStartParams fills defaults and keeps what was given", () => {
  assert.deepEqual(checkStartParams(base), {
    ...base,
    arg0: null,
    pipeStdin: false,
    size: undefined,
    sandbox: null,
  });
  const full = checkStartParams({ ...base, tty: true, size: { rows: 5, cols: 7 }, arg0: "ls" });
  assert.deepEqual(full.size, { rows: 5, cols: 7 });
  assert.equal(full.arg0, "ls");
});

Deno.test("checkStartParams reads a restricted sandbox into its permission set", () => {
  const start = checkStartParams({
    ...base,
    sandbox: { mode: "restricted", write: ["file:///srv/app/"], deny: ["/srv/app/.env"] },
  });
  assert.deepEqual(start.sandbox, {
    rules: [
      { path: "/", access: "read" },
      { path: "/srv/app", access: "write" },
      { path: "/srv/app/.env", access: "deny" },
    ],
    network: false,
  });
  assert.equal(checkStartParams({ ...base, sandbox: { mode: "none" } }).sandbox, null);
  refused({ ...base, sandbox: { mode: "restricted", read: ["x"] } }, /sandbox\.read\[0\]/);
});

Deno.test("checkStartParams names the bad field", () => {
  refused({ ...base, argv: [] }, /argv must not be empty/);
  refused({ ...base, argv: [""] }, /argv\[0\] must not be empty/);
  refused({ ...base, argv: ["a", "b\0c"] }, /argv\[1\] must not contain NUL/);
  refused({ ...base, cwd: "tmp" }, /cwd must be an absolute path, got "tmp"/);
  refused({ ...base, env: { "A=B": "x" } }, /invalid entry "A=B"/);
  refused({ ...base, tty: true, arg0: "other" }, /cannot differ from argv\[0\]/);
  refused({ ...base, arg0: 3 }, /arg0 must be a string or null/);
  refused({ ...base, size: { rows: 0, cols: 80 } }, /size\.rows must be an integer from 1/);
  refused(
    { ...base, sandbox: { mode: "strict" } },
    /unsupported sandbox/,
    ErrorCode.InvalidRequest,
  );
});

Deno.test("checkTerminalSize: from 1 to 65535, with or without a prefix", () => {
  assert.deepEqual(checkTerminalSize({ rows: 1, cols: 65535 }), { rows: 1, cols: 65535 });
  assert.throws(() => checkTerminalSize({ rows: 1, cols: 65536 }), /^RpcError: cols must/);
  assert.throws(() => checkTerminalSize({ rows: 1.5, cols: 2 }, "size."), /size\.rows must/);
});

import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "./errors.ts";
import { checkWalkOptions } from "./walk.ts";

/** Assert that `fn` throws an InvalidParams RpcError whose message matches. */
function invalid(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, ErrorCode.InvalidParams);
    assert.match(err.message, message);
    return true;
  });
}

const FULL = {
  maxDepth: 3,
  maxDirectories: 10,
  maxEntries: 100,
  followDirectorySymlinks: true,
};

Deno.test("checkWalkOptions lenient (v0): everything may be left out", () => {
  assert.deepEqual(checkWalkOptions(undefined, false), {});
  assert.deepEqual(checkWalkOptions({}, false), {});
  assert.deepEqual(checkWalkOptions({ maxDepth: 2 }, false), { maxDepth: 2 });
  assert.deepEqual(checkWalkOptions({ ...FULL, pruneHiddenDirectories: false }, false), {
    ...FULL,
    pruneHiddenDirectories: false,
  });
  // Unknown members are ignored, as serde ignores them upstream.
  assert.deepEqual(checkWalkOptions({ maxEntries: 1, other: "x" }, false), { maxEntries: 1 });
});

Deno.test("checkWalkOptions strict (Codex): the object and all but pruneHiddenDirectories are required", () => {
  assert.deepEqual(checkWalkOptions(FULL, true), FULL);
  assert.deepEqual(checkWalkOptions({ ...FULL, pruneHiddenDirectories: true }, true), {
    ...FULL,
    pruneHiddenDirectories: true,
  });
  invalid(() => checkWalkOptions(undefined, true), /^options must be an object, got nothing$/);
  for (const key of Object.keys(FULL)) {
    const { [key]: _, ...rest } = FULL as Record<string, unknown>;
    invalid(
      () => checkWalkOptions(rest, true),
      new RegExp(`^options\\.${key} must be a .*got nothing$`),
    );
  }
});

Deno.test("checkWalkOptions: wrong types are -32602 naming the member, in both dialects", () => {
  for (const strict of [false, true]) {
    invalid(() => checkWalkOptions(null, strict), /options must be an object, got null/);
    invalid(() => checkWalkOptions([1], strict), /options must be an object/);
    invalid(() => checkWalkOptions("deep", strict), /got "deep"/);
    const bad = (patch: Record<string, unknown>) => checkWalkOptions({ ...FULL, ...patch }, strict);
    invalid(
      () => bad({ maxDepth: -1 }),
      /options\.maxDepth must be a non-negative integer, got -1/,
    );
    invalid(() => bad({ maxDirectories: 2.5 }), /options\.maxDirectories .* got 2\.5/);
    invalid(() => bad({ maxEntries: "9" }), /options\.maxEntries .* got "9"/);
    invalid(() => bad({ maxEntries: null }), /options\.maxEntries .* got null/);
    invalid(() => bad({ followDirectorySymlinks: 1 }), /followDirectorySymlinks must be a boolean/);
    invalid(
      () => bad({ pruneHiddenDirectories: "yes" }),
      /pruneHiddenDirectories must be a boolean/,
    );
  }
});

Deno.test("checkWalkOptions leaves the bounds to the walk: zero and over-maximum pass", () => {
  // Upstream answers these -32600, not -32602: the walk plan refuses them (../fs/walk_test.ts).
  const bounds = { maxDepth: 65, maxDirectories: 0, maxEntries: 1_000_000 };
  assert.deepEqual(checkWalkOptions({ ...FULL, ...bounds }, true), { ...FULL, ...bounds });
  assert.deepEqual(checkWalkOptions(bounds, false), bounds);
});

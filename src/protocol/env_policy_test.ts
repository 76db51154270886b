import assert from "node:assert/strict";
import { buildEnvironment, checkEnvPolicy } from "./env_policy.ts";

const base = { PATH: "/bin", HOME: "/root", GITHUB_TOKEN: "t", aws_secret: "s", LANG: "C" };
const policy = (p: object = {}) => checkEnvPolicy({ inherit: "all", ...p })!;

Deno.test("buildEnvironment: inherit, default excludes, exclude, set, includeOnly, env", () => {
  assert.deepEqual(buildEnvironment(base, policy(), {}), {
    PATH: "/bin",
    HOME: "/root",
    LANG: "C",
  });
  assert.deepEqual(
    buildEnvironment(base, policy({ ignoreDefaultExcludes: true }), {}),
    base,
  );
  assert.deepEqual(buildEnvironment(base, policy({ inherit: "core" }), {}), {
    PATH: "/bin",
    HOME: "/root",
  });
  assert.deepEqual(buildEnvironment(base, policy({ inherit: "none" }), { A: "1" }), { A: "1" });
  assert.deepEqual(
    buildEnvironment(base, policy({ exclude: ["l?ng"], set: { X: "y" } }), {}),
    { PATH: "/bin", HOME: "/root", X: "y" },
  );
  assert.deepEqual(
    buildEnvironment(base, policy({ includeOnly: ["PA*"] }), { TERM: "dumb" }),
    { PATH: "/bin", TERM: "dumb" },
    "env is laid over after includeOnly",
  );
});

Deno.test("checkEnvPolicy names the bad field", () => {
  assert.equal(checkEnvPolicy(null), undefined);
  assert.throws(() => checkEnvPolicy({ inherit: "some" }), /envPolicy.inherit/);
  assert.throws(() => checkEnvPolicy({ exclude: "x" }), /envPolicy.exclude/);
  assert.throws(() => checkEnvPolicy({ set: { A: 1 } }), /envPolicy.set/);
  assert.throws(() => checkEnvPolicy([]), /envPolicy must be an object/);
});

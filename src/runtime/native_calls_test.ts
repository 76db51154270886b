import assert from "node:assert/strict";
import { nativeCall, type NativeCalls, provideNativeCalls } from "./native_calls.ts";

Deno.test("nativeCall: loads the provided calls once, on first use, bound to their addon", () => {
  let loads = 0;
  const addon = {
    granted: 4096,
    setPipeSize(this: { granted: number }, _fd: number, _bytes: number): number {
      return this.granted;
    },
  };
  provideNativeCalls(() => (loads++, addon));
  assert.equal(loads, 0, "nothing is loaded before a call is needed");
  assert.equal(nativeCall("setPipeSize")?.(1, 1 << 20), 4096);
  assert.equal(nativeCall("setPipeSize")?.(1, 1 << 20), 4096);
  assert.equal(nativeCall("writeBehind"), undefined, "a call the addon lacks");
  assert.equal(loads, 1);
});

Deno.test("nativeCall: an addon that will not load means no calls, asked once", () => {
  let loads = 0;
  provideNativeCalls((): NativeCalls => {
    loads++;
    throw new Error("cannot open shared object file");
  });
  assert.equal(nativeCall("setPipeSize"), undefined);
  assert.equal(nativeCall("writeBehind"), undefined);
  assert.equal(loads, 1);
  provideNativeCalls(() => undefined);
  assert.equal(nativeCall("setPipeSize"), undefined);
});

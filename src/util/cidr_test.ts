import assert from "node:assert/strict";
import { inCidr } from "./cidr.ts";

Deno.test("inCidr: IPv4 blocks", () => {
  assert.equal(inCidr("10.1.2.3", "10.0.0.0/8"), true);
  assert.equal(inCidr("11.0.0.1", "10.0.0.0/8"), false);
  assert.equal(inCidr("192.168.1.77", "192.168.1.64/26"), true);
  assert.equal(inCidr("192.168.1.128", "192.168.1.64/26"), false);
  assert.equal(inCidr("1.2.3.4", "0.0.0.0/0"), true);
  assert.equal(inCidr("1.2.3.4", "1.2.3.4/32"), true);
});

Deno.test("inCidr: IPv6 blocks, compressed forms", () => {
  assert.equal(inCidr("fd00::1", "fc00::/7"), true);
  assert.equal(inCidr("2001:db8::1", "fc00::/7"), false);
  assert.equal(inCidr("::1", "::1/128"), true);
  assert.equal(inCidr("2001:db8:0:0:0:0:0:5", "2001:db8::/32"), true);
});

Deno.test("inCidr: what is not an address or a block is never inside", () => {
  assert.equal(inCidr("example.com", "10.0.0.0/8"), false);
  assert.equal(inCidr("10.0.0.1", "10.0.0.0"), false);
  assert.equal(inCidr("10.0.0.1", "10.0.0.0/33"), false);
  assert.equal(inCidr("10.0.0.1", "10.0.0.0/x"), false);
  assert.equal(inCidr("256.0.0.1", "0.0.0.0/0"), false);
  assert.equal(inCidr("10.0.0.1", "::/0"), false, "families differ");
  assert.equal(inCidr("1::2::3", "::/0"), false);
});

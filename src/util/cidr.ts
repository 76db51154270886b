/**
 * Whether an IP address lies in a CIDR block (`10.0.0.0/8`, `fd00::/8`),
 * for `no_proxy` lists: pure, IPv4 and IPv6, no runtime API needed.
 *
 * @module
 */

/** An address as a number of `bits` bits, or undefined when it is not one. */
function parseIp(text: string): { value: bigint; bits: 32 | 128 } | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    if (parts.some((p) => p > 255)) return undefined;
    return { value: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n), bits: 32 };
  }
  if (!text.includes(":") || !/^[0-9a-f:]+$/i.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string) => s === "" ? [] : s.split(":");
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (all.some((g) => g.length === 0 || g.length > 4)) return undefined;
  return { value: all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n), bits: 128 };
}

/**
 * Whether `address` is inside `block` (`ADDRESS/PREFIX`); false for
 * anything that is not an address and a block of the same family.
 *
 * @example
 * ```ts
 * import { inCidr } from "./cidr.ts";
 * inCidr("10.1.2.3", "10.0.0.0/8"); // true
 * inCidr("fd00::1", "fc00::/7"); // true
 * inCidr("example.com", "10.0.0.0/8"); // false
 * ```
 */
export function inCidr(address: string, block: string): boolean {
  const slash = block.lastIndexOf("/");
  if (slash < 0) return false;
  const ip = parseIp(address);
  const net = parseIp(block.slice(0, slash));
  const prefix = Number(block.slice(slash + 1));
  if (!ip || !net || ip.bits !== net.bits) return false;
  if (!/^\d+$/.test(block.slice(slash + 1)) || prefix > ip.bits) return false;
  const shift = BigInt(ip.bits - prefix);
  return (ip.value >> shift) === (net.value >> shift);
}

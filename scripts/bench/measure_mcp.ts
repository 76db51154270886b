/**
 * What the MCP façade costs: `exec_command` of a trivial command through
 * `exec-server mcp` on stdio (the SDK, the tool layer, the login shell
 * lookup done once, the in-process server), beside the same command
 * started and awaited over the plain protocol in the same run. Only this
 * project's server has `mcp`; for another `--server-cmd` the row is left
 * out, saying why.
 *
 * @module
 */
import { spawn } from "node:child_process";
import type { BenchConfig } from "./config.ts";
import { type Report, stats } from "./report.ts";
import { Conn, runProcess } from "./rpc_client.ts";

/**
 * `cmd` with `mcp` after the program (cli.ts, or a binary named
 * exec-server*), whose server flags `mcp` does not take.
 */
export function mcpCommand(cmd: string[]): string[] {
  const at = cmd.findIndex((a) => /cli\.[jt]s$|exec-server[^/]*$/.test(a));
  return at < 0 ? [...cmd, "mcp"] : [...cmd.slice(0, at + 1), "mcp"];
}

/** A bare MCP client on `cmd mcp`'s stdio. */
function mcpClient(cmd: string[]) {
  const [bin, ...rest] = mcpCommand(cmd);
  const child = spawn(bin, rest, { stdio: ["pipe", "pipe", "ignore"] });
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  let buffer = "";
  let id = 0;
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const msg = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      waiting.get(msg.id)?.(msg);
      waiting.delete(msg.id);
    }
  });
  const call = (method: string, params: unknown) =>
    new Promise<Record<string, unknown>>((resolve) => {
      waiting.set(++id, resolve);
      child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  return { child, call };
}

/** `exec_command {argv: ["true"]}` round trips, beside process/start→exited of the same. */
export async function measureMcp(cfg: BenchConfig, rep: Report): Promise<void> {
  const mcp = mcpClient(cfg.serverCmd);
  const init = await Promise.race([
    mcp.call("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bench", version: "1" },
    }),
    new Promise<undefined>((r) => mcp.child.once("exit", () => r(undefined))),
  ]);
  if (!init || !("result" in init)) {
    console.error("mcp: skipped (the server has no `mcp` command)");
    mcp.child.kill("SIGKILL");
    return;
  }
  mcp.child.stdin!.write(
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n",
  );
  const direct = new Conn(cfg.serverCmd);
  await direct.init(false);
  try {
    const rounds = cfg.quick ? 30 : 100;
    const viaMcp: number[] = [];
    const viaProtocol: number[] = [];
    // The first call also asks the host who its user is: not counted.
    await mcp.call("tools/call", { name: "exec_command", arguments: { argv: ["true"] } });
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      const r = await mcp.call("tools/call", {
        name: "exec_command",
        arguments: { argv: ["true"] },
      });
      viaMcp.push(performance.now() - t0);
      const exit = (r.result as { structuredContent?: { exit_code?: number } })?.structuredContent;
      if (exit?.exit_code !== 0) throw new Error(`exec_command failed: ${JSON.stringify(r)}`);
      viaProtocol.push((await runProcess(direct, ["true"], false)).ms);
    }
    const s = stats(viaMcp);
    rep.add({
      name: "mcp exec_command round trip (true)",
      unit: "ms",
      value: s.median,
      p95: s.p95,
      floor: stats(viaProtocol).median,
      floorName: "process/start to exited, v0 stdio",
    });
  } finally {
    mcp.child.stdin!.end();
    await direct.close();
  }
}

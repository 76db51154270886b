import assert from "node:assert/strict";
import { type NotificationSink, ProcessTable } from "./process_table.ts";
import { resolveServerOptions } from "./options.ts";
import type { CheckedStart } from "../protocol/spawn_rules.ts";

/** A sink that records every notification and can refuse more (a slow client). */
class FakeSink implements NotificationSink {
  notes: Record<string, unknown>[] = [];
  accepting = true;
  #drain: (() => void)[] = [];

  send(text: string): boolean {
    this.notes.push(JSON.parse(text));
    return this.accepting;
  }

  onDrain(listener: () => void): void {
    this.#drain.push(listener);
  }

  drain(): void {
    this.accepting = true;
    for (const l of this.#drain) l();
  }

  exited(id: string): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      const check = () => {
        const found = this.notes.find((n) =>
          n.method === "process/exited" && (n.params as { processId: string }).processId === id
        );
        if (found) resolve(found);
        else setTimeout(check, 5);
      };
      check();
    });
  }

  output(id: string): string {
    return this.notes
      .filter((n) =>
        n.method === "process/output" && (n.params as { processId: string }).processId === id
      )
      .map((n) => atob((n.params as { chunk: string }).chunk))
      .join("");
  }
}

const start = (processId: string, argv: string[]): CheckedStart => ({
  processId,
  argv,
  cwd: "/",
  env: { PATH: "/usr/bin:/bin" },
  tty: false,
});

Deno.test("ProcessTable: nothing is sent before the start is announced; output before exit", async () => {
  const sink = new FakeSink();
  const table = new ProcessTable(resolveServerOptions(), sink);
  const announce = await table.start(start("a", ["echo", "hello"]));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(sink.notes.length, 0, "notes before the start response was sent");
  announce();
  const exited = await sink.exited("a");
  assert.equal((exited.params as { exitCode: number }).exitCode, 0);
  assert.equal(sink.output("a"), "hello\n");
  const methods = sink.notes.map((n) => n.method);
  assert.equal(methods.at(-1), "process/exited");
  const read = await table.read("a", 0, undefined, 0);
  assert.equal(read.exited, true);
  assert.equal(atob(read.chunks[0].chunk), "hello\n");
  await table.closeAll();
});

Deno.test("ProcessTable: a refusing sink pauses output; a drain resumes it, nothing lost", async () => {
  const sink = new FakeSink();
  const table = new ProcessTable(resolveServerOptions(), sink);
  sink.accepting = false;
  (await table.start(start("b", ["seq", "1", "20000"])))();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(table.paused, true);
  sink.drain();
  await sink.exited("b");
  const expected = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join("");
  assert.equal(sink.output("b"), expected);
  await table.closeAll();
});

Deno.test("ProcessTable: limits count running processes; exits free their slot", async () => {
  const sink = new FakeSink();
  const table = new ProcessTable(resolveServerOptions({ maxProcesses: 1 }), sink);
  (await table.start(start("c", ["true"])))();
  await sink.exited("c");
  assert.equal(table.running, 0);
  assert.equal(table.size, 1);
  (await table.start(start("d", ["sleep", "30"])))();
  await assert.rejects(table.start(start("e", ["true"])), /process limit reached: 1 running/);
  assert.equal(table.terminate("d"), true);
  await sink.exited("d");
  await table.closeAll();
});

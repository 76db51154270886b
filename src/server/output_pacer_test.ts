import assert from "node:assert/strict";
import { BUSY_MERGE_MS, BUSY_MIN_BYTES, OutputPacer, type PacerClock } from "./output_pacer.ts";

/** A clock whose turns and timers run only when the test says so. */
class FakeClock implements PacerClock {
  ms = 0;
  #soon: (() => void)[] = [];
  #timers = new Map<number, { at: number; fn: () => void }>();
  #nextTimer = 1;

  now(): number {
    return this.ms;
  }
  soon(fn: () => void): void {
    this.#soon.push(fn);
  }
  later(fn: () => void, ms: number): unknown {
    const id = this.#nextTimer++;
    this.#timers.set(id, { at: this.ms + ms, fn });
    return id;
  }
  cancel(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  get pendingTimers(): number {
    return this.#timers.size;
  }
  /** End this turn: run what was scheduled for it. */
  endTurn(): void {
    const fns = this.#soon;
    this.#soon = [];
    for (const fn of fns) fn();
  }
  /** Let `ms` pass, firing due timers. */
  advance(ms: number): void {
    this.ms += ms;
    for (const [id, t] of [...this.#timers]) {
      if (t.at <= this.ms) {
        this.#timers.delete(id);
        t.fn();
      }
    }
  }
}

/** A pacer over processes named by objects, whose flushes send `bytes` each. */
function setup(bytes: number) {
  const clock = new FakeClock();
  const sent: string[] = [];
  const pending = new Set<{ name: string }>();
  const pacer = new OutputPacer<{ name: string }>((p) => {
    if (!pending.delete(p)) return;
    sent.push(p.name);
    pacer.flushed(p, bytes);
  }, clock);
  const merged = (p: { name: string }) => {
    pending.add(p);
    pacer.merged(p);
  };
  return { clock, sent, pacer, merged };
}

Deno.test("OutputPacer: output is sent at the end of the turn it was read in, merged once", () => {
  const { clock, sent, merged } = setup(10);
  const p = { name: "p" };
  merged(p);
  merged(p);
  assert.deepEqual(sent, []);
  clock.endTurn();
  assert.deepEqual(sent, ["p"]);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("OutputPacer: small output right after small output waits for no clock", () => {
  const { clock, sent, merged } = setup(BUSY_MIN_BYTES - 1);
  const p = { name: "p" };
  for (let i = 0; i < 5; i++) {
    merged(p);
    clock.endTurn();
  }
  assert.deepEqual(sent, ["p", "p", "p", "p", "p"]);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("OutputPacer: a streaming process's reads merge for a millisecond", () => {
  const { clock, sent, merged } = setup(4096);
  const p = { name: "p" };
  merged(p);
  clock.endTurn();
  assert.deepEqual(sent, ["p"]);
  // Big output right after a big flush: it waits, over several turns.
  for (let i = 0; i < 3; i++) {
    clock.advance(0.1);
    merged(p);
    clock.endTurn();
  }
  assert.deepEqual(sent, ["p"]);
  clock.advance(BUSY_MERGE_MS);
  assert.deepEqual(sent, ["p", "p"]);
  // Output after a pause longer than the window goes out in its turn again.
  clock.advance(BUSY_MERGE_MS * 5);
  merged(p);
  clock.endTurn();
  assert.deepEqual(sent, ["p", "p", "p"]);
});

Deno.test("OutputPacer: a write to a streaming process sends its output in this turn", () => {
  const { clock, sent, merged, pacer } = setup(4096);
  const p = { name: "p" };
  merged(p);
  clock.endTurn();
  merged(p);
  clock.endTurn();
  assert.deepEqual(sent, ["p"], "streaming: waiting for the timer");
  pacer.input(p);
  assert.deepEqual(sent, ["p", "p"], "the waiting output went out before the write");
  // And the echo that follows the write is not held either.
  merged(p);
  clock.endTurn();
  assert.deepEqual(sent, ["p", "p", "p"]);
});

Deno.test("OutputPacer: one process streaming does not hold another's output", () => {
  const { clock, sent, merged } = setup(4096);
  const a = { name: "a" };
  const b = { name: "b" };
  merged(a);
  clock.endTurn();
  merged(a);
  merged(b);
  clock.endTurn();
  assert.deepEqual(sent, ["a", "b"]);
  clock.advance(BUSY_MERGE_MS);
  assert.deepEqual(sent, ["a", "b", "a"]);
});

Deno.test("OutputPacer: a direct flush cancels the scheduled one; close drops the timer", () => {
  const { clock, sent, merged, pacer } = setup(4096);
  const p = { name: "p" };
  merged(p);
  clock.endTurn();
  merged(p);
  assert.equal(clock.pendingTimers, 1);
  // The caller flushed by itself (a full merge buffer, an exit).
  pacer.flushed(p, 4096);
  clock.advance(BUSY_MERGE_MS / 2);
  assert.deepEqual(sent, ["p"], "nothing more to send: the flush was made");
  merged(p);
  clock.advance(BUSY_MERGE_MS / 2);
  assert.deepEqual(sent, ["p", "p"], "the timer flushed what came after");
  merged(p);
  assert.equal(clock.pendingTimers, 1);
  pacer.close();
  assert.equal(clock.pendingTimers, 0);
});

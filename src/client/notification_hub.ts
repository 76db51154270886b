/**
 * Where a client's notifications go: the handle of the process they belong
 * to, the `onOutput`/`onExited` listeners, and every open
 * `notifications()` iterator, in arrival order.
 *
 * @module
 */
import { Notifications } from "../protocol/descriptors.ts";
import { AsyncQueue } from "../util/async_queue.ts";
import { toExitedEvent, toOutputEvent } from "./notifications.ts";
import type { ExitedEvent, OutputEvent, ServerNotification } from "./options.ts";
import type { ProcessSink } from "./process_handle.ts";

/** A process handle's end inside the hub. */
interface Registered {
  sink: ProcessSink;
  seq: number;
  state: { exited: boolean };
}

/**
 * Fans notifications out. Malformed ones are reported through `onProblem`
 * and otherwise ignored.
 */
export class NotificationHub {
  #procs = new Map<string, Registered>();
  #outputListeners = new Set<(event: OutputEvent) => void>();
  #exitedListeners = new Set<(event: ExitedEvent) => void>();
  #queues = new Set<AsyncQueue<ServerNotification>>();
  #ended = false;
  #onProblem: (message: string) => void;

  /** @param onProblem told of malformed notifications and throwing listeners */
  constructor(onProblem: (message: string) => void) {
    this.#onProblem = onProblem;
  }

  /** Whether a handle is registered under `id`. */
  has(id: string): boolean {
    return this.#procs.has(id);
  }

  /** Route `id`'s notifications to `sink` until its exit; `state.exited` is set then. */
  register(id: string, sink: ProcessSink, state: { exited: boolean }): void {
    this.#procs.set(id, { sink, seq: 0, state });
  }

  /** Forget `id` if it is still `sink`'s (a start that failed). */
  unregister(id: string, sink: ProcessSink): void {
    if (this.#procs.get(id)?.sink === sink) this.#procs.delete(id);
  }

  /** See `ExecServerClient.onOutput`. */
  onOutput(listener: (event: OutputEvent) => void): () => void {
    this.#outputListeners.add(listener);
    return () => this.#outputListeners.delete(listener);
  }

  /** See `ExecServerClient.onExited`. */
  onExited(listener: (event: ExitedEvent) => void): () => void {
    this.#exitedListeners.add(listener);
    return () => this.#exitedListeners.delete(listener);
  }

  /** See `ExecServerClient.notifications`. */
  notifications(): AsyncIterableIterator<ServerNotification> {
    const queue = new AsyncQueue<ServerNotification>(() => this.#queues.delete(queue));
    if (this.#ended) queue.end();
    else this.#queues.add(queue);
    const iterator = queue[Symbol.asyncIterator]();
    return {
      next: () => iterator.next(),
      return: () => iterator.return!(),
      [Symbol.asyncIterator]() {
        return this;
      },
    } as AsyncIterableIterator<ServerNotification>;
  }

  /** Deliver one notification. */
  dispatch(method: string, params: unknown): void {
    if (this.#ended) return;
    if (method === Notifications.processOutput.method) {
      const event = toOutputEvent(params);
      if (!event) return this.#malformed(method, params);
      const proc = this.#procs.get(event.processId);
      if (proc) {
        proc.seq = event.seq ?? proc.seq + 1;
        proc.sink.output({ stream: event.stream, data: event.data, seq: proc.seq });
      }
      this.#emit(this.#outputListeners, event, { kind: "output", event });
    } else if (method === Notifications.processExited.method) {
      const event = toExitedEvent(params);
      if (!event) return this.#malformed(method, params);
      const proc = this.#procs.get(event.processId);
      if (proc) {
        proc.state.exited = true;
        this.#procs.delete(event.processId);
        proc.sink.exited({
          exitCode: event.exitCode,
          signal: event.signal,
          durationMs: event.durationMs ?? 0,
          ...(event.sandboxDenied === undefined ? {} : { sandboxDenied: event.sandboxDenied }),
        });
      }
      this.#emit(this.#exitedListeners, event, { kind: "exited", event });
    } else {
      for (const q of this.#queues) q.push({ kind: "other", method, params });
    }
  }

  /** The connection ended: every handle fails with `error`, every iterator ends. */
  end(error: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    const procs = [...this.#procs.values()];
    this.#procs.clear();
    for (const p of procs) p.sink.failed(error);
    for (const q of this.#queues) q.end();
    this.#queues.clear();
  }

  #malformed(method: string, params: unknown): void {
    this.#onProblem(`ignored a malformed ${method}: ${JSON.stringify(params).slice(0, 200)}`);
  }

  #emit<E>(listeners: Set<(event: E) => void>, event: E, note: ServerNotification): void {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.#onProblem(`an event listener threw: ${err instanceof Error ? err.message : err}`);
      }
    }
    for (const q of this.#queues) q.push(note);
  }
}

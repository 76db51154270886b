/**
 * What a process that starts commands sets up before it serves anyone:
 * the lifeline (whatever ends this process ends its children's trees) and
 * the native calls Node lacks.
 *
 * @module
 */
import { startLifeline } from "../process/lifeline.ts";
import { loadNativePty } from "../process/pty_native.ts";
import { provideNativeCalls } from "../runtime/native_calls.ts";
import type { Logger } from "../server/logger.ts";

/** Prepare this process to run commands; problems are logged as warnings. */
export function prepareProcess(logger: Logger): void {
  // Whatever ends this process, the processes it starts end with it.
  startLifeline({ onProblem: (message) => logger.warn(message) });
  // Calls Node lacks (bigger stdio pipes, write-behind) come from
  // node-pty's patched addon, loaded on the first one needed.
  provideNativeCalls(loadNativePty);
}

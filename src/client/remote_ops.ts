/**
 * What a remote process handle does, in protocol calls. Once its process
 * has exited the calls never reach the server: after the server's
 * retention the id may name a new process there.
 *
 * @module
 */
import type { TerminalSize } from "../protocol/methods.ts";
import { ProcessError, ServerError } from "./errors.ts";
import type { ProcessOps } from "./process_handle.ts";
import type { ProtocolCalls } from "./protocol_calls.ts";

/**
 * The operations of the handle of remote process `id`; `state.exited` is
 * set by whoever sees its exit.
 */
export function remoteProcessOps(
  calls: ProtocolCalls,
  id: string,
  state: { readonly exited: boolean },
): ProcessOps {
  const wrap = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    if (state.exited) throw new ProcessError(id, operation, "the process has exited");
    try {
      return await call();
    } catch (err) {
      if (err instanceof ServerError) {
        throw new ProcessError(id, operation, err.serverMessage, { cause: err });
      }
      throw err;
    }
  };
  return {
    write: (data: Uint8Array) => wrap("write", () => calls.processWrite(id, data)),
    closeStdin: () => wrap("closeStdin", () => calls.processCloseStdin(id)),
    resize: (size: TerminalSize) => wrap("resize", () => calls.processResize(id, size)),
    signal: async (signal: string) => {
      await wrap("signal", () => calls.processSignal(id, signal));
    },
    terminate: (graceMs: number | undefined) =>
      state.exited
        ? Promise.resolve(false)
        : wrap("terminate", () => calls.processTerminate(id, { graceMs })),
  };
}

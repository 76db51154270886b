/** The no-loss matrix (no_loss_matrix.ts) against the server from source under Deno. */
import { denoServerCommand } from "./harness.ts";
import { defineNoLossTests } from "./no_loss_matrix.ts";

defineNoLossTests("deno", denoServerCommand);

/** The no-loss matrix (no_loss_matrix.ts) against the npm build under Node. */
import { nodeServerCommand } from "./harness.ts";
import { defineNoLossTests } from "./no_loss_matrix.ts";

defineNoLossTests("node", nodeServerCommand);

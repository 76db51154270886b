/**
 * What a tool call answers: content for the model, and for clients that
 * read it, `structuredContent`. Failures the model can act on (a missing
 * file, a bad argument) are results with `isError`, not protocol errors,
 * so that the model sees them.
 *
 * @module
 */

/** One block of a tool's content. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string };

/** A tool call's result, as MCP's `tools/call` answers it. */
export interface ToolResult {
  /** What the model reads. */
  content: ContentBlock[];
  /** The same facts as data. */
  structuredContent?: Record<string, unknown>;
  /** True when the call failed. */
  isError?: boolean;
  /** MCP results are open objects. */
  [key: string]: unknown;
}

/** A text result, with optional structured data. */
export function textResult(text: string, structured?: Record<string, unknown>): ToolResult {
  return structured === undefined
    ? { content: [{ type: "text", text }] }
    : { content: [{ type: "text", text }], structuredContent: structured };
}

/** A failed call, its message for the model. */
export function errorResult(message: string): ToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** A tool's failure the model reads as its result (the run goes on). */
export class ToolError extends Error {}

/** How a run uses its agent's knowledge bases (spec `doc_mode`, DESIGN §14): null or absent = `auto`. */
export const DOC_MODES = ['auto', 'grounded', 'off'] as const;
export type DocMode = (typeof DOC_MODES)[number];

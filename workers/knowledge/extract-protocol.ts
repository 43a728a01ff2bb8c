/** What workers/knowledge/extract.ts and its thread (extract-thread.ts) exchange: the limits, the job and the answer. */

/** Text of a document: a page per PDF page (1-based); one page `null` for formats without pages. */
export interface ExtractedPage {
  page: number | null;
  text: string;
}

export interface ExtractLimits {
  /** Most pages a PDF may have (checked before any page is read). */
  maxPages: number;
  /** How long reading one PDF or DOCX may take. */
  timeoutMs: number;
  /** Most characters of text one document may hold. */
  maxTextChars: number;
  /** Most bytes a DOCX may inflate to in all, and any one buffer a PDF stream may inflate into. */
  maxUncompressedBytes: number;
}

export const PDF = 'application/pdf';
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export interface ThreadJob {
  bytes: Uint8Array;
  contentType: string;
  limits: ExtractLimits;
}
export type ThreadAnswer = { pages: ExtractedPage[] } | { refusal: string } | { crash: string };

import { apiFailure, type Session } from '../../session';
import type { Document } from './modes';

/** The extensions the API ingests (CONTENT_TYPES in src/knowledge/service.ts): the file picker offers these. */
export const DOCUMENT_EXTENSIONS = '.txt,.text,.md,.markdown,.html,.htm,.pdf,.docx';

interface Answer {
  status: number;
  text: string;
}

/**
 * Uploads one document as multipart form data. XMLHttpRequest, not fetch: only it reports upload
 * progress. It carries the session's bearer token; a 401 refreshes the session once and sends again.
 * Resolves with the document and whether it is new (202) or the same bytes were already there (200).
 */
export async function uploadDocument(session: Session, kbId: string, file: File, onProgress: (fraction: number) => void, signal: AbortSignal): Promise<{ document: Document; created: boolean }> {
  const send = () => sendOnce(`/api/knowledge-bases/${encodeURIComponent(kbId)}/documents`, session.accessToken, file, onProgress, signal);
  let answer = await send();
  if (answer.status === 401 && (await session.refresh())) {
    onProgress(0);
    answer = await send();
  }
  if (answer.status < 200 || answer.status >= 300) throw await apiFailure(new Response(answer.text, { status: answer.status }));
  return { document: JSON.parse(answer.text) as Document, created: answer.status === 202 };
}

function sendOnce(url: string, token: string | undefined, file: File, onProgress: (fraction: number) => void, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
    xhr.onerror = () => reject(new Error(`${file.name} could not be sent: the connection failed`));
    xhr.onabort = () => reject(new Error(`The upload of ${file.name} was stopped`));
    if (signal.aborted) return reject(new Error(`The upload of ${file.name} was stopped`));
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

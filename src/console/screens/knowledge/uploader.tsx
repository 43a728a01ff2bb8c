import { useEffect, useRef, useState } from 'preact/hooks';
import { useConsole } from '../../context';
import { asError } from '../../ui/async';
import { bytes } from '../../ui/forms';
import { DOCUMENT_EXTENSIONS, uploadDocument } from './upload';

interface Sending {
  name: string;
  size: number;
  fraction: number;
  outcome?: { ok: true; note: string } | { ok: false; message: string };
}

/** Chooses documents and uploads them one after another, each with its progress bar; leaving the screen stops them. */
export function Uploader({ kbId, onUploaded }: { kbId: string; onUploaded: () => void }) {
  const { session } = useConsole();
  const [files, setFiles] = useState<File[]>([]);
  const [sending, setSending] = useState<Sending[]>([]);
  const [busy, setBusy] = useState(false);
  const [pickerKey, setPickerKey] = useState(0);
  const stop = useRef(new AbortController());
  useEffect(() => () => stop.current.abort(), []);
  const update = (index: number, change: Partial<Sending>) => setSending((rows) => rows.map((row, i) => (i === index ? { ...row, ...change } : row)));

  const upload = async () => {
    setBusy(true);
    setSending(files.map((file) => ({ name: file.name, size: file.size, fraction: 0 })));
    for (const [index, file] of files.entries()) {
      if (stop.current.signal.aborted) return;
      try {
        const { created } = await uploadDocument(session, kbId, file, (fraction) => update(index, { fraction }), stop.current.signal);
        update(index, { fraction: 1, outcome: { ok: true, note: created ? 'uploaded' : 'already in this knowledge base' } });
        onUploaded();
      } catch (err) {
        if (stop.current.signal.aborted) return;
        update(index, { outcome: { ok: false, message: asError(err).message } });
      }
    }
    setFiles([]);
    setPickerKey((n) => n + 1);
    setBusy(false);
  };

  return (
    <form
      class="panel uploader"
      aria-labelledby="upload-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (files.length > 0) void upload();
      }}
    >
      <h2 id="upload-title">Upload documents</h2>
      <div class="row">
        <div class="field">
          <label for="document-files">Documents (.txt, .md, .html, .pdf, .docx)</label>
          <input key={pickerKey} id="document-files" type="file" multiple accept={DOCUMENT_EXTENSIONS} disabled={busy} onChange={(e) => setFiles([...((e.currentTarget as HTMLInputElement).files ?? [])])} />
        </div>
        <div class="field">
          <button type="submit" disabled={busy || files.length === 0}>
            {busy ? 'Uploading…' : files.length > 1 ? `Upload ${files.length} documents` : 'Upload'}
          </button>
        </div>
      </div>
      {sending.length > 0 && (
        <ul class="uploads" aria-label="Uploads">
          {sending.map((row) => (
            <li key={row.name}>
              <span class="name">
                {row.name} <span class="muted">({bytes(row.size)})</span>
              </span>
              <progress max={1} value={row.fraction} aria-label={`Upload of ${row.name}`} />
              <span class="muted">{Math.round(row.fraction * 100)}%</span>
              {row.outcome?.ok && <span class="saved">{row.outcome.note}</span>}
              {row.outcome && !row.outcome.ok && (
                <span class="error" role="alert">
                  {row.outcome.message}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}

import { useEffect, useState } from 'preact/hooks';
import type { Citation } from '../../shared/events.js';
import { useConsole } from '../context';
import './attachments.css';

/** An image of a message: a stored file (`id`), or a picked one not yet sent (`previewUrl`, a blob: URL of this page). */
export interface ImageRef {
  id?: string;
  filename: string;
  /** A blob: URL of the picked file, for this page's life only. */
  previewUrl?: string;
  deleted?: boolean;
}

export function Images({ images }: { images: ImageRef[] }) {
  if (images.length === 0) return null;
  return (
    <ul class="images" aria-label="Attached images">
      {images.map((image, i) => (
        <li key={image.id ?? `${image.filename}-${i}`}>
          <Thumbnail image={image} />
        </li>
      ))}
    </ul>
  );
}

/** The picked file's own blob: URL, or the stored file's bytes fetched with the session's token. */
function Thumbnail({ image }: { image: ImageRef }) {
  const { authorizedFetch } = useConsole();
  const [fetched, setFetched] = useState<string>();
  useEffect(() => {
    if (image.previewUrl || !image.id || image.deleted) return;
    let url: string | undefined;
    let live = true;
    authorizedFetch(new Request(`/api/files/${encodeURIComponent(image.id)}/content`))
      .then((res) => (res.ok ? res.blob() : undefined))
      .then((blob) => {
        if (!blob || !live) return;
        url = URL.createObjectURL(blob);
        setFetched(url);
      })
      .catch(() => {});
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [image.id, image.previewUrl]);
  const src = image.previewUrl ?? fetched;
  return (
    <figure class="thumb">
      {src ? <img src={src} alt={image.filename} /> : <span class="placeholder" aria-hidden="true" />}
      <figcaption>{image.deleted ? `${image.filename} (deleted)` : image.filename}</figcaption>
    </figure>
  );
}

export function Citations({ citations }: { citations: Citation[] }) {
  if (citations.length === 0) return null;
  return (
    <div class="citations">
      <p class="label">Sources</p>
      <ol>
        {citations.map((citation) => (
          <li key={citation.chunk_id}>
            {citation.document_name}
            {citation.page !== null && <span class="muted"> · page {citation.page}</span>}
          </li>
        ))}
      </ol>
    </div>
  );
}

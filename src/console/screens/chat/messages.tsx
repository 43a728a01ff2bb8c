import { useEffect, useState } from 'preact/hooks';
import type { Citation } from '../../../shared/events.js';
import { useConsole } from '../../context';
import type { HistoryMessage, ImageRef } from './transcript';

/** A message of the conversation's stored history. */
export function MessageView({ message }: { message: HistoryMessage }) {
  const who = message.role === 'user' ? (message.injected ? 'You (added while it ran)' : 'You') : message.role === 'assistant' ? 'Assistant' : 'System';
  return (
    <article class={`message ${message.role}${message.injected ? ' injected' : ''}`} aria-label={`${who} said`}>
      <p class="who">{who}</p>
      <Images images={message.images} />
      <p class="text">{message.content}</p>
      <Citations citations={message.citations} />
    </article>
  );
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

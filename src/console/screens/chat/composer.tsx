import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { SelectField, TextAreaField } from '../../ui/parts';
import type { RunMode } from '../../../shared/run-statuses.js';
import { DEFAULT_AGENT_LABEL, modelLabel } from '../agents/names';
import type { DocMode } from './follow';

type Agent = components['schemas']['Agent'];

export interface Question {
  q: string;
  files: File[];
}

export interface ComposerProps {
  agents: Agent[];
  agentId: string;
  onAgent: (agentId: string) => void;
  mode: RunMode;
  onMode: (mode: RunMode) => void;
  docMode: DocMode;
  onDocMode: (docMode: DocMode) => void;
  /** A run is active: send is off (inject instead). */
  busy: boolean;
  onSend: (question: Question) => Promise<boolean>;
}

const IMAGE_TYPES = 'image/png,image/jpeg,image/webp,image/gif';
/** The API takes at most 10 images per message (DESIGN §15). */
const MAX_IMAGES = 10;

/** The question form: agent, ReAct or DAG, how knowledge is used (doc_mode), the message and its images. */
const DOC_MODES: { value: DocMode; label: string }[] = [
  { value: 'auto', label: 'Auto (search when useful)' },
  { value: 'grounded', label: 'Grounded (only from its knowledge)' },
  { value: 'off', label: 'Off (no knowledge search)' },
];

export function Composer({ agents, agentId, onAgent, mode, onMode, docMode, onDocMode, busy, onSend }: ComposerProps) {
  const [q, setQ] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const [sending, setSending] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!q.trim() || busy || sending) return;
    setSending(true);
    const sent = await onSend({ q: q.trim(), files });
    setSending(false);
    if (sent) {
      setQ('');
      setFiles([]);
    }
  };
  const keyDown = (event: KeyboardEvent) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void submit(event);
  };
  const agentOptions = [{ value: '', label: DEFAULT_AGENT_LABEL }, ...agents.map((agent) => ({ value: agent.id, label: `${agent.name} (${modelLabel(agent.model)})` }))];
  return (
    <form class="composer panel" onSubmit={(event) => void submit(event)} aria-label="Ask">
      <div class="row">
        <SelectField label="Agent" value={agentId} options={agentOptions} onChange={(event) => onAgent(event.currentTarget.value)} />
        <SelectField label="Mode" value={mode} options={[{ value: 'react', label: 'ReAct' }, { value: 'dag', label: 'DAG (plan of nodes)' }]} onChange={(event) => onMode(event.currentTarget.value as RunMode)} />
        <SelectField label="Knowledge" value={docMode} options={DOC_MODES} onChange={(event) => onDocMode(event.currentTarget.value as DocMode)} />
      </div>
      <TextAreaField label="Message" value={q} onInput={(event) => setQ(event.currentTarget.value)} onKeyDown={keyDown} placeholder="Ask something… (Ctrl+Enter sends)" />
      <PickedImages files={files} onRemove={(file) => setFiles(files.filter((f) => f !== file))} />
      <div class="row composer-actions">
        <label class="attach">
          <span class="attach-label">Attach images</span>
          <input
            type="file"
            accept={IMAGE_TYPES}
            multiple
            onChange={(event) => {
              const picked = [...(event.currentTarget.files ?? [])];
              setFiles([...files, ...picked].slice(0, MAX_IMAGES));
              event.currentTarget.value = '';
            }}
          />
        </label>
        <button type="submit" disabled={busy || sending || !q.trim()}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
      {busy && <p class="muted small">A run is active: add to it with Inject above, or cancel it.</p>}
    </form>
  );
}

/** The images about to be sent, each previewed from its own blob: URL. */
function PickedImages({ files, onRemove }: { files: File[]; onRemove: (file: File) => void }) {
  const [urls, setUrls] = useState<string[]>([]);
  useEffect(() => {
    const made = files.map((file) => URL.createObjectURL(file));
    setUrls(made);
    return () => made.forEach((url) => URL.revokeObjectURL(url));
  }, [files]);
  if (files.length === 0) return null;
  return (
    <ul class="images picked" aria-label="Images to send">
      {files.map((file, i) => (
        <li key={`${file.name}-${i}`}>
          <figure class="thumb">
            {urls[i] && <img src={urls[i]} alt={file.name} />}
            <figcaption>{file.name}</figcaption>
          </figure>
          <button type="button" class="secondary small" aria-label={`Remove ${file.name}`} onClick={() => onRemove(file)}>
            Remove
          </button>
        </li>
      ))}
    </ul>
  );
}

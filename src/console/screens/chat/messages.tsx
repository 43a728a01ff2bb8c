import { Citations, Images } from '../../ui/attachments';
import type { HistoryMessage } from './transcript';
import { runHref } from '../runs/links';

/** A message of the conversation's stored history. */
export function MessageView({ message }: { message: HistoryMessage }) {
  const who = message.role === 'user' ? (message.injected ? 'You (added while it ran)' : 'You') : message.role === 'assistant' ? 'Assistant' : 'System';
  return (
    <article class={`message ${message.role}${message.injected ? ' injected' : ''}`} aria-label={`${who} said`}>
      <p class="who">
        {who}
        {message.role === 'assistant' && message.runId && (
          <a class="run-link" href={runHref(message.runId)}>
            Run page
          </a>
        )}
      </p>
      <Images images={message.images} />
      <p class="text">{message.content}</p>
      <Citations citations={message.citations} />
    </article>
  );
}

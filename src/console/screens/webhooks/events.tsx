import { Check } from '../account/parts';

export const WEBHOOK_EVENTS = ['run.succeeded', 'run.failed', 'run.cancelled', 'run.interrupted', 'run.waiting', 'run.requires_action', 'eval.succeeded', 'eval.failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const DEFAULT_EVENTS: WebhookEvent[] = ['run.succeeded', 'run.failed', 'run.cancelled'];

export function EventChecks({ events, onChange }: { events: WebhookEvent[]; onChange: (events: WebhookEvent[]) => void }) {
  return (
    <fieldset class="checks">
      <legend>Events</legend>
      {WEBHOOK_EVENTS.map((event) => (
        <Check key={event} label={event} checked={events.includes(event)} onChange={(on) => onChange(on ? [...events, event] : events.filter((e) => e !== event))} />
      ))}
    </fieldset>
  );
}

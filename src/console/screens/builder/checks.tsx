import { checkedOf, toggled } from '../../ui/forms';

/** A labelled group of checkboxes choosing some of `options` (tools, knowledge bases, connectors). */
export function CheckGroup({ legend, options, chosen, onChange, empty }: { legend: string; options: { value: string; label: string; hint?: string }[]; chosen: string[]; onChange: (chosen: string[]) => void; empty?: string }) {
  return (
    <fieldset class="checks">
      <legend>{legend}</legend>
      {options.length === 0 && <p class="empty">{empty ?? 'None to choose from.'}</p>}
      {options.map((option) => (
        <label key={option.value}>
          <input type="checkbox" checked={chosen.includes(option.value)} onChange={(e) => onChange(toggled(chosen, option.value, checkedOf(e)))} />
          <span>{option.label}</span>
          {option.hint && <small class="hint">{option.hint}</small>}
        </label>
      ))}
    </fieldset>
  );
}

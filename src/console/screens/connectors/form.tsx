import { useState } from 'preact/hooks';
import type { operations } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction } from '../../ui/async';
import { ErrorNotice, Field, SelectField, TextAreaField } from '../../ui/parts';
import { checkedOf, valueOf } from '../../ui/forms';
import { TRANSPORTS, type Connector } from './types';

type CreateBody = operations['postApiConnectors']['requestBody']['content']['application/json'];
type UpdateBody = operations['patchApiConnectorsId']['requestBody']['content']['application/json'];

interface NewHeader {
  key: number;
  name: string;
  value: string;
}

/**
 * Creates or changes a connector. Stored header values are never shown: the form lists their names,
 * each removable, and takes new values (which replace a header of the same name).
 */
export function ConnectorForm({ connector, onSaved, onCancel }: { connector?: Connector; onSaved: () => void; onCancel: () => void }) {
  const { api } = useConsole();
  const [name, setName] = useState(connector?.name ?? '');
  const [url, setUrl] = useState(connector?.url ?? '');
  const [transport, setTransport] = useState(connector?.transport ?? 'streamable_http');
  const [description, setDescription] = useState(connector?.description ?? '');
  const [active, setActive] = useState(connector?.is_active ?? true);
  const [removed, setRemoved] = useState<string[]>([]);
  const [headers, setHeaders] = useState<NewHeader[]>([]);
  const [nextKey, setNextKey] = useState(0);
  const changeHeader = (key: number, change: Partial<NewHeader>) => setHeaders((rows) => rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  const addHeader = () => {
    setHeaders((rows) => [...rows, { key: nextKey, name: '', value: '' }]);
    setNextKey((n) => n + 1);
  };

  const save = useAction(async () => {
    const given = headers.filter((h) => h.name.trim());
    const fields = { name, url, transport: transport as CreateBody['transport'], description, is_active: active };
    if (!connector) {
      await must(api.POST('/api/connectors', { body: { ...fields, kind: 'mcp', headers: Object.fromEntries(given.map((h) => [h.name.trim(), h.value])) } }));
    } else {
      const changed = Object.fromEntries(Object.entries(fields).filter(([field, value]) => connector[field as keyof Connector] !== value)) as UpdateBody;
      const headerChanges = { ...Object.fromEntries(removed.map((n) => [n, null])), ...Object.fromEntries(given.map((h) => [h.name.trim(), h.value])) };
      const body: UpdateBody = { ...changed, ...(Object.keys(headerChanges).length ? { headers: headerChanges } : {}) };
      if (Object.keys(body).length > 0) await must(api.PATCH('/api/connectors/{id}', { params: { path: { id: connector.id } }, body }));
    }
    onSaved();
  });

  const title = connector ? `Edit ${connector.name}` : 'New connector';
  return (
    <form
      class="panel connector-form"
      aria-label={title}
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <h2>{title}</h2>
      <div class="form-grid">
        <Field label="Name" required maxLength={64} value={name} onInput={(e) => setName(valueOf(e))} hint="Its tools are named <name>__<tool>" />
        <div class="wide">
          <Field label="Server URL" type="url" required value={url} onInput={(e) => setUrl(valueOf(e))} placeholder="https://mcp.example.com/mcp" />
        </div>
        <SelectField label="Transport" value={transport} options={TRANSPORTS} onChange={(e) => setTransport(valueOf(e))} />
        <div class="field checkbox">
          <label>
            <input type="checkbox" checked={active} onChange={(e) => setActive(checkedOf(e))} /> Active
          </label>
        </div>
        <div class="wide">
          <TextAreaField label="Description" rows={2} maxLength={2000} value={description} onInput={(e) => setDescription(valueOf(e))} />
        </div>
      </div>
      <fieldset class="headers">
        <legend>Headers (sent to the server, e.g. Authorization)</legend>
        {connector?.secret_headers.map((header) => (
          <div key={header} class="row header stored">
            <span class="mono">{header}</span>
            <span class="badge">value set, hidden</span>
            <label>
              <input type="checkbox" checked={removed.includes(header)} onChange={(e) => setRemoved((list) => (checkedOf(e) ? [...list, header] : list.filter((n) => n !== header)))} /> Remove {header}
            </label>
          </div>
        ))}
        {headers.map((header, index) => (
          <div key={header.key} class="row header">
            <Field label={`Header ${index + 1} name`} value={header.name} onInput={(e) => changeHeader(header.key, { name: valueOf(e) })} placeholder="Authorization" />
            <Field label={`Header ${index + 1} value`} type="password" autoComplete="off" value={header.value} onInput={(e) => changeHeader(header.key, { value: valueOf(e) })} />
            <div class="field">
              <button type="button" class="secondary" onClick={() => setHeaders((rows) => rows.filter((row) => row.key !== header.key))}>
                Drop
              </button>
            </div>
          </div>
        ))}
        <button type="button" class="secondary" onClick={addHeader}>
          Add header
        </button>
        {connector && connector.secret_headers.length > 0 && <p class="hint">A new header with a stored header's name replaces its value.</p>}
      </fieldset>
      <ErrorNotice error={save.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : connector ? 'Save connector' : 'Create connector'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

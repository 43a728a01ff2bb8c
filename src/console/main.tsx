import { render } from 'preact';
import { App } from './app';
import { authorizedFetch, makeClient } from './api';
import { Console } from './context';
import { Session } from './session';
import './styles.css';

const session = new Session(sessionStorage);
const context = { session, api: makeClient(session), authorizedFetch: authorizedFetch(session) };
const root = document.getElementById('app')!;

// A reload keeps the tab's session (and a streaming run resumes): restore it before the first render.
void session.restore().finally(() => {
  render(
    <Console.Provider value={context}>
      <App />
    </Console.Provider>,
    root,
  );
  root.dataset.ready = 'true';
});

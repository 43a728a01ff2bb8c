import type { ComponentType } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useConsole } from './context';
import { useRoute } from './router';
import { SCREENS, screenFor, type ScreenEntry } from './screens';
import { SignIn } from './screens/sign-in';
import { ErrorNotice } from './ui/parts';
import { asError } from './ui/async';
import { QueueDashboardButton } from './ui/queue-dashboard';

/** The console once the session is known: sign-in, or the navigation and the current screen. */
export function App() {
  const { session } = useConsole();
  const [, setVersion] = useState(0);
  useEffect(() => session.subscribe(() => setVersion((n) => n + 1)), [session]);
  if (!session.user) return <SignIn />;
  return <Shell />;
}

function Shell() {
  const { session } = useConsole();
  const route = useRoute();
  const screen = screenFor(route);
  const visible = SCREENS.filter((entry) => (!entry.admin || session.isAdmin) && !entry.linkedOnly);
  const menu = useMenu(route);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <nav aria-label="Console" class={menu.open ? 'open' : undefined} onKeyDown={menu.onKeyDown}>
        <div class="nav-bar">
          <p class="brand">Agent Platform</p>
          {/* Shown on narrow screens only (styles.css): the navigation folds into this menu. */}
          <button type="button" class="menu-toggle secondary" aria-expanded={menu.open} aria-controls="console-menu" ref={menu.toggleRef} onClick={menu.toggle}>
            Menu
          </button>
        </div>
        <div id="console-menu" class="nav-menu">
          <ul>
            {visible.filter((entry) => !entry.admin).map((entry) => (
              <NavLink key={entry.path} entry={entry} current={screen === entry} />
            ))}
          </ul>
          {session.isAdmin && (
            <>
              <p class="nav-group" id="nav-admin">
                Administration
              </p>
              <ul aria-labelledby="nav-admin">
                {visible.filter((entry) => entry.admin).map((entry) => (
                  <NavLink key={entry.path} entry={entry} current={screen === entry} />
                ))}
                <li>
                  <QueueDashboardButton />
                </li>
              </ul>
            </>
          )}
          <div class="who">
            <span>{session.user?.email}</span>
            <button type="button" onClick={() => session.signOut()}>
              Sign out
            </button>
          </div>
        </div>
      </nav>
      <main id="main" tabIndex={-1}>
        {screen && (!screen.admin || session.isAdmin) ? <LazyScreen key={screen.path} entry={screen} route={route} /> : <NotFound route={route} />}
      </main>
    </div>
  );
}

/** The narrow screen's menu: open or closed; it closes on a new route, and Escape closes it and returns focus to its button. */
function useMenu(route: string) {
  const [open, setOpen] = useState(false);
  const toggleRef = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [route]);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !open) return;
    setOpen(false);
    toggleRef.current?.focus();
  };
  return { open, toggle: () => setOpen((was) => !was), toggleRef, onKeyDown };
}

function NavLink({ entry, current }: { entry: ScreenEntry; current: boolean }) {
  return (
    <li>
      <a href={`#${entry.path}`} aria-current={current ? 'page' : undefined}>
        {entry.label}
      </a>
    </li>
  );
}

function NotFound({ route }: { route: string }) {
  return (
    <section class="screen">
      <h1>Not found</h1>
      <p>
        There is no screen at <code>{route}</code> for you. <a href="#/chat">Go to the chat</a>.
      </p>
    </section>
  );
}

/** A screen's chunk, loaded on first use; a chunk that fails to load says so rather than leaving a blank page. */
function LazyScreen({ entry, route }: { entry: ScreenEntry; route: string }) {
  const [loaded, setLoaded] = useState<{ Component?: ComponentType<{ route: string }>; error?: Error }>({});
  useEffect(() => {
    entry.load().then(
      (module) => setLoaded({ Component: module.default }),
      (error: unknown) => setLoaded({ error: asError(error) }),
    );
  }, [entry]);
  if (loaded.error) return <ErrorNotice error={new Error(`The ${entry.label} screen could not be loaded: ${loaded.error.message}`)} />;
  if (!loaded.Component) return <p aria-busy="true">Loading…</p>;
  return <loaded.Component route={route} />;
}

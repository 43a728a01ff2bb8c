import { useEffect, useState } from 'preact/hooks';

/**
 * The console's screens are addressed by the URL's hash (`/console#/agents/…`): the server serves
 * one page at one path, and a link or reload lands on the same screen.
 */
export function currentRoute(): string {
  return decodeURI(location.hash.replace(/^#/, '')) || '/chat';
}

export function useRoute(): string {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export function navigate(route: string): void {
  location.hash = `#${route}`;
}

/** The parts of a route after its screen's prefix: `/agents/42` under `/agents` → ['42']. */
export function routeParts(route: string, prefix: string): string[] {
  return route.slice(prefix.length).split('/').filter(Boolean);
}

import type { ComponentType } from 'preact';

export interface ScreenEntry {
  /** The route prefix: `/agents` also serves `/agents/{id}`. */
  path: string;
  label: string;
  admin?: boolean;
  /** Reached by links only (a run's page), not listed in the navigation. */
  linkedOnly?: boolean;
  /** Each screen is its own chunk, loaded when first shown: the first load carries only the shell and the chat. */
  load: () => Promise<{ default: ComponentType<{ route: string }> }>;
}

export const SCREENS: ScreenEntry[] = [
  { path: '/chat', label: 'Chat', load: () => import('./screens/chat') },
  { path: '/conversations', label: 'Conversations', load: () => import('./screens/conversations') },
  { path: '/agents', label: 'Agents', load: () => import('./screens/agents') },
  { path: '/knowledge', label: 'Knowledge bases', load: () => import('./screens/knowledge') },
  { path: '/memories', label: 'Memories', load: () => import('./screens/memories') },
  { path: '/connectors', label: 'Connectors', load: () => import('./screens/connectors') },
  { path: '/schedules', label: 'Schedules', load: () => import('./screens/schedules') },
  { path: '/evals', label: 'Evals', load: () => import('./screens/evals') },
  { path: '/keys', label: 'API keys', load: () => import('./screens/keys') },
  { path: '/webhooks', label: 'Webhooks', load: () => import('./screens/webhooks') },
  { path: '/runs', label: 'Run', linkedOnly: true, load: () => import('./screens/runs') },
  { path: '/admin/users', label: 'Users', admin: true, load: () => import('./screens/admin/users') },
  { path: '/admin/runs', label: 'Runs', admin: true, load: () => import('./screens/admin/runs') },
  { path: '/admin/usage', label: 'Usage and cost', admin: true, load: () => import('./screens/admin/usage') },
  { path: '/admin/prices', label: 'Model prices', admin: true, load: () => import('./screens/admin/prices') },
  { path: '/admin/audit', label: 'Audit log', admin: true, load: () => import('./screens/admin/audit') },
];

export function screenFor(route: string): ScreenEntry | undefined {
  return SCREENS.find((screen) => route === screen.path || route.startsWith(`${screen.path}/`));
}

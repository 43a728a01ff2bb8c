/** `npm run bench -- NAME`: runs one benchmark and prints its figures. */
const benches: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  auth: () => import('./auth.js'),
  runs: () => import('./runs.js'),
  'runs-gateway': () => import('./runs-gateway.js'),
  recovery: () => import('./recovery.js'),
  retrieval: () => import('./retrieval.js'),
  connectors: () => import('./connectors.js'),
  admin: () => import('./admin.js'),
  webhooks: () => import('./webhooks.js'),
  capacity: () => import('./capacity.js'),
  scale: () => import('./scale.js'),
  files: () => import('./files.js'),
  compat: () => import('./compat.js'),
  'compat-structured': () => import('./compat-structured.js'),
  'compat-client-tools': () => import('./compat-client-tools.js'),
  limits: () => import('./limits.js'),
  schedules: () => import('./schedules.js'),
  conversations: () => import('./conversations.js'),
  console: () => import('./console.js'),
  trust: () => import('./trust.js'),
  'compat-retrieval': () => import('./compat-retrieval.js'),
  evals: () => import('./evals.js'),
  memory: () => import('./memory.js'),
};

const name = process.argv[2];
const load = name ? benches[name] : undefined;
if (!load) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}>`);
  process.exit(2);
}
await (await load()).run(process.argv.slice(3));
process.exit(0);

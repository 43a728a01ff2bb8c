/** `npm run bench -- NAME`: runs one benchmark and prints its figures. */
const benches: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  auth: () => import('./auth.js'),
  runs: () => import('./runs.js'),
  recovery: () => import('./recovery.js'),
  retrieval: () => import('./retrieval.js'),
};

const name = process.argv[2];
const load = name ? benches[name] : undefined;
if (!load) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}>`);
  process.exit(2);
}
await (await load()).run();
process.exit(0);

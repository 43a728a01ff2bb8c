import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** The console (DESIGN §17), built into dist/console and served by the web process at /console. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Every script is a file of this origin (the CSP allows no other): no inline preload helper either.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});

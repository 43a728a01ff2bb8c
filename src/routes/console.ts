import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as v from 'valibot';
import { Reply, route, type Route } from '../auth/route.js';
import { NotFoundError, UnavailableError } from '../shared/errors.js';

/**
 * The console (DESIGN §17): a single-page app built by Vite into dist/console at `npm run build`.
 * Served from this process and origin under a strict Content-Security-Policy: every script and
 * style is a file of this server, none inline, and the page talks only to this origin.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const MEDIA_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Where the build put the console: beside the compiled server (dist/src/routes → dist/console), or from the sources (src/routes → dist/console). */
function consoleDirectory(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, '../../console'), join(here, '../../dist/console')].find((dir) => existsSync(join(dir, 'index.html')));
}

interface ConsoleFiles {
  page: Buffer;
  /** Only the files the build wrote are served, by exact name: a path never reaches the file system. */
  assets: Map<string, { body: Buffer; mediaType: string }>;
}

function readConsole(directory: string): ConsoleFiles {
  const assetsDirectory = join(directory, 'assets');
  const names = existsSync(assetsDirectory) ? readdirSync(assetsDirectory) : [];
  const assets = new Map(
    names.filter((name) => MEDIA_TYPES[extname(name)]).map((name) => [name, { body: readFileSync(join(assetsDirectory, name)), mediaType: MEDIA_TYPES[extname(name)]! }] as const),
  );
  return { page: readFileSync(join(directory, 'index.html')), assets };
}

const PAGE_HEADERS = { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': CONSOLE_CSP, 'Referrer-Policy': 'no-referrer' };

export function consoleRoutes(): Route[] {
  let files: ConsoleFiles | undefined;
  const built = (): ConsoleFiles => {
    if (files) return files;
    const directory = consoleDirectory();
    if (!directory) throw new UnavailableError('The console is not built: run `npm run build`', 60, 'dist/console/index.html is missing');
    return (files = readConsole(directory));
  };
  return [
    route({
      method: 'GET',
      path: '/console',
      summary: 'The web console (DESIGN §17): a single page, every script and style served from here',
      auth: 'public',
      responses: { 200: { mediaType: 'text/html', description: 'The console page' } },
      handle: () => new Reply(200, built().page, PAGE_HEADERS),
    }),
    route({
      method: 'GET',
      path: '/console/assets/:file',
      summary: "The console's scripts and styles (content-hashed names, kept by the browser)",
      auth: 'public',
      params: v.object({ file: v.pipe(v.string(), v.maxLength(200)) }),
      responses: { 200: { mediaType: 'text/*', description: 'A script (text/javascript) or style (text/css) of the console' } },
      handle: ({ params }) => {
        const asset = built().assets.get(params.file);
        if (!asset) throw new NotFoundError(`The console has no file ${params.file}`);
        return new Reply(200, asset.body, { 'Content-Type': asset.mediaType, 'Cache-Control': 'public, max-age=31536000, immutable', 'Content-Security-Policy': CONSOLE_CSP });
      },
    }),
  ];
}

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as v from 'valibot';
import { Reply, route, type Route } from '../auth/route.js';
import { openApiDocument } from './openapi.js';

/** Swagger UI's files, served from the installed package (never a CDN): the docs page works offline. */
const uiDirectory = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const INIT_FILE = 'init.js';
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Agent Platform API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/${INIT_FILE}"></script>
</body>
</html>
`;
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout', validatorUrl: null });\n`;

/** Read on first use and kept: the bundle is large and never changes while the process runs. */
function lazily<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** The page's files by name: Swagger UI's from the package, and the script that points it at the document. */
const FILES: Record<string, { mediaType: string; read: () => Buffer | string; cache?: string }> = {
  // The package's files change only with a deploy and carry no user data: a browser may keep them for an hour.
  'swagger-ui.css': { mediaType: 'text/css', read: lazily(() => readFileSync(join(uiDirectory, 'swagger-ui.css'))), cache: 'public, max-age=3600' },
  'swagger-ui-bundle.js': { mediaType: 'text/javascript', read: lazily(() => readFileSync(join(uiDirectory, 'swagger-ui-bundle.js'))), cache: 'public, max-age=3600' },
  [INIT_FILE]: { mediaType: 'text/javascript', read: () => INIT },
};

const OpenApiDocumentBody = v.looseObject({ openapi: v.literal('3.1.0'), info: v.looseObject({ title: v.string(), version: v.string() }), paths: v.record(v.string(), v.unknown()) });

/** The OpenAPI document of `routes` (its own routes included) and a page that renders it (DESIGN §12). */
export function docsRoutes(routes: () => Route[]): Route[] {
  const document = lazily(() => JSON.stringify(openApiDocument(routes())));
  return [
    route({
      method: 'GET',
      path: '/openapi.json',
      summary: 'This OpenAPI 3.1 document, generated from the route declarations',
      auth: 'public',
      responses: { 200: OpenApiDocumentBody },
      handle: () => new Reply(200, document(), { 'Content-Type': 'application/json; charset=utf-8' }),
    }),
    route({
      method: 'GET',
      path: '/docs',
      summary: 'The API documentation page (Swagger UI from the installed package; works offline)',
      auth: 'public',
      responses: { 200: { mediaType: 'text/html', description: 'The documentation page' } },
      handle: () => new Reply(200, PAGE, { 'Content-Type': 'text/html; charset=utf-8' }),
    }),
    ...Object.entries(FILES).map(([file, { mediaType, read, cache }]) =>
      route({
        method: 'GET',
        path: `/docs/${file}`,
        summary: `The docs page's ${file}`,
        auth: 'public',
        responses: { 200: { mediaType, description: file } },
        handle: () => new Reply(200, read(), { 'Content-Type': `${mediaType}; charset=utf-8`, ...(cache && { 'Cache-Control': cache }) }),
      }),
    ),
  ];
}

import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ERROR_CATALOG } from '../errors/catalog.ts';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"]/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char] ?? char,
  );

/** Every error's `links.about` points here: one anchor per code, with its status and meaning. */
function renderErrorsPage(): string {
  const rows = Object.entries(ERROR_CATALOG)
    .map(
      ([code, entry]) =>
        `<tr id="${code}"><td><code>${code}</code></td><td>${entry.status}</td><td>${escapeHtml(entry.detail)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Error codes · EWA Server</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1b1f24}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #d0d7de}
tr:target{background:#fff8c5}code{font-size:.95em}
</style></head><body>
<h1>Error codes</h1>
<p>Every REST error is a JSON:API error document whose <code>code</code> is one of these. The
<a href="/rest/docs">API reference</a> lists which operation can return which status.</p>
<table><thead><tr><th scope="col">Code</th><th scope="col">Status</th><th scope="col">Meaning</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>`;
}

async function errorsPage(app: FastifyInstance): Promise<void> {
  const html = renderErrorsPage();
  app.get(
    '/rest/errors',
    { config: { mediaType: 'text/html', public: true }, schema: { hide: true } },
    async (_request, reply) => reply.type('text/html; charset=utf-8').send(html),
  );
}

export const errorsPagePlugin = fp(errorsPage, {
  name: 'errors-page',
  fastify: '5.x',
  dependencies: ['json-api'],
});

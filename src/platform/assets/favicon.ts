import { readFileSync } from 'node:fs';

/** EWA Server's icon (favicon.svg beside this file): the reference page's favicon and the sign-in pages'. */
export const FAVICON_SVG = readFileSync(new URL('./favicon.svg', import.meta.url), 'utf8').trim();

/** The icon as a data: URI, for pages that link it inline (their img-src allows data:). */
export const FAVICON_DATA_URI = `data:image/svg+xml,${encodeURIComponent(FAVICON_SVG)}`;

/**
 * Whether a page of `origin` may read answers from here, by EWA_CORS_ORIGINS: `*` allows every origin, otherwise
 * only one on the list, exactly. A page with an opaque origin (a sandboxed frame, a file) sends `null`: never one.
 */
export function allowsOrigin(origins: readonly string[], origin: string | undefined): boolean {
  if (origin === undefined || origin === 'null') return false;
  return origins.includes('*') || origins.includes(origin);
}

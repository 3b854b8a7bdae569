import { FAVICON_DATA_URI } from '../../platform/assets/favicon.ts';
import { type Html, html, raw } from './html.ts';

const STYLE = `
:root{color-scheme:light;--ink:#14213d;--muted:#52606d;--line:#d9e2ec;--brand:#0b6e4f;--brand-ink:#fff;--bad:#b42318;--bg:#f4f7fb}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid var(--line);border-radius:14px;box-shadow:0 8px 24px rgba(20,33,61,.08)}
h1{font-size:1.5rem;margin:0 0 .25rem}
p{margin:.5rem 0}
.lede{color:var(--muted);margin-bottom:1.5rem}
label{display:block;font-weight:600;margin:1rem 0 .35rem}
input{width:100%;padding:.7rem .8rem;border:1px solid #9aa5b1;border-radius:8px;font:inherit}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid #ffbf47;outline-offset:2px}
.hint{color:var(--muted);font-size:.9rem;margin-top:.3rem}
button{display:inline-block;width:100%;margin-top:1.5rem;padding:.75rem 1rem;border:0;border-radius:8px;font:inherit;font-weight:600;cursor:pointer;background:var(--brand);color:var(--brand-ink)}
button.secondary{background:#fff;color:var(--ink);border:1px solid #9aa5b1;margin-top:.75rem}
.actions{display:flex;gap:.75rem}.actions button{margin-top:1.5rem}
.error{border:1px solid var(--bad);background:#fef3f2;color:var(--bad);padding:.75rem 1rem;border-radius:8px;margin:1rem 0}
.client{display:flex;align-items:center;gap:.75rem;margin-bottom:1rem}
.client img{width:48px;height:48px;border-radius:10px;object-fit:contain;border:1px solid var(--line)}
ul.scopes{padding-left:1.2rem}ul.scopes li{margin:.4rem 0}
.links{font-size:.9rem;color:var(--muted)}
a{color:var(--brand)}
.who{display:flex;align-items:center;justify-content:space-between;gap:.75rem;border:1px solid var(--line);border-radius:8px;padding:.5rem .8rem;margin:0 0 1rem}
.who p{margin:0}.muted{color:var(--muted);font-size:.9rem;word-break:break-all}
button.link{width:auto;margin:0;padding:.5rem .25rem;background:none;color:var(--brand);text-decoration:underline;font-weight:600;white-space:nowrap}
.support{font-size:.8rem;color:var(--muted);margin-top:1.5rem;word-break:break-word}
footer{text-align:center;color:var(--muted);font-size:.85rem;margin:-1.5rem 0 2rem}
`;

/** The frame of every sign-in page: one column, large targets, visible focus, no script. */
export function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · EWA</title>
<link rel="icon" type="image/svg+xml" href="${FAVICON_DATA_URI}">
<style>${raw(STYLE)}</style>
</head>
<body>
<main>
${body}
</main>
<footer>Earned-wage access, secured by EWA Server</footer>
</body>
</html>`.value;
}

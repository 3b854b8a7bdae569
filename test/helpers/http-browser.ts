/** A request of the browser: a form is posted; extra headers (X-Forwarded-For behind a trusted proxy) are sent. */
export interface BrowserRequest {
  method?: string;
  form?: Record<string, string>;
  /** A form body as sent, for what an object cannot hold (a field twice). */
  rawForm?: string;
  headers?: Record<string, string>;
}

/**
 * Just enough of a browser to walk the sign-in pages over real HTTP: a cookie jar, manual redirects, and form
 * posts with the hidden fields a page carries. The Chromium tests do the same with a real browser.
 */
export class HttpBrowser {
  readonly #cookies = new Map<string, string>();
  readonly #origin: string;
  readonly #connectTo: string | undefined;

  /**
   * `origin` is where the pages say they are (the issuer); `connectTo`, when given, is where the server really
   * listens (a process whose public URL is https, reached over plain HTTP on 127.0.0.1, as behind its proxy).
   */
  constructor(origin: string, connectTo?: string) {
    this.#origin = origin;
    this.#connectTo = connectTo;
  }

  #store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  #cookieHeader(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(url: string, init: BrowserRequest = {}): Promise<Response> {
    const absolute = new URL(url, this.#origin);
    const target = this.#connectTo
      ? new URL(`${absolute.pathname}${absolute.search}`, this.#connectTo)
      : absolute;
    const response = await fetch(target, {
      method: init.method ?? (init.form || init.rawForm !== undefined ? 'POST' : 'GET'),
      redirect: 'manual',
      headers: {
        cookie: this.#cookieHeader(),
        accept: 'text/html',
        ...(init.form || init.rawForm !== undefined
          ? { 'content-type': 'application/x-www-form-urlencoded' }
          : {}),
        ...init.headers,
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
      ...(init.rawForm !== undefined ? { body: init.rawForm } : {}),
    });
    this.#store(response);
    return response;
  }

  /** Follows redirects on this origin; stops at the first page, or at a redirect that leaves the origin. */
  async follow(
    url: string,
    init: BrowserRequest = {},
  ): Promise<{ url: string; response: Response; body: string }> {
    let current = new URL(url, this.#origin).toString();
    let response = await this.request(current, init);
    for (let hops = 0; hops < 10 && response.status >= 300 && response.status < 400; hops++) {
      const next = new URL(response.headers.get('location')!, current).toString();
      if (new URL(next).origin !== this.#origin) return { url: next, response, body: '' };
      current = next;
      response = await this.request(current);
    }
    return { url: current, response, body: await response.text() };
  }
}

/** The start of a sign-in: an authorization request with PKCE for `openid user:read`, as a partner app sends it. */
export function authorizationUrl(origin: string, clientId: string, redirectUri: string): string {
  const url = new URL('/oauth2/auth', origin);
  for (const [key, value] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid user:read',
    state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(key, value);
  return url.toString();
}

/** The value of a hidden input on a page. */
export function hiddenField(page: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(page);
  if (!match) throw new Error(`no field ${name} on the page`);
  return match[1]!;
}

/** The action of the form on a page that carries a field with this name. */
export function formAction(page: string, index = 0): string {
  const actions = [...page.matchAll(/<form method="post" action="([^"]+)"/g)].map((match) => match[1]!);
  if (!actions[index]) throw new Error('no form on the page');
  return actions[index]!.replace(/&amp;/g, '&');
}

/**
 * Walks an authorization request as a person would: sign in (or sign up), then allow or deny. Returns where the
 * browser was finally sent: the client's redirect URI with a code or an error, or the last page shown.
 */
export async function authorize(
  browser: HttpBrowser,
  authorizationUrl: string,
  person: { email: string; password: string; employeeId?: string; decision?: 'allow' | 'deny' },
): Promise<{ url: string; body: string; status: number }> {
  let page = await browser.follow(authorizationUrl);
  if (page.body.includes('name="password"') && page.body.includes('autocomplete="current-password"')) {
    if (person.employeeId) {
      const signup = await browser.follow(page.url.replace(/\/?$/, '/signup'));
      page = await browser.follow(formAction(signup.body), {
        form: {
          csrf: hiddenField(signup.body, 'csrf'),
          email: person.email,
          employee_id: person.employeeId,
          password: person.password,
        },
      });
    } else {
      page = await browser.follow(formAction(page.body), {
        form: { csrf: hiddenField(page.body, 'csrf'), email: person.email, password: person.password },
      });
    }
  }
  if (page.body.includes('name="decision"')) {
    page = await browser.follow(formAction(page.body), {
      form: { csrf: hiddenField(page.body, 'csrf'), decision: person.decision ?? 'allow' },
    });
  }
  return { url: page.url, body: page.body, status: page.response.status };
}

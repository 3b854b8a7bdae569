import { PASSWORD_LENGTH_MIN } from '../../crypto/passwords.ts';
import { ALL_SCOPES } from '../scopes.ts';
import { html, raw } from './html.ts';
import { page } from './layout.ts';

export interface ClientView {
  name: string;
  logoUri?: string | undefined;
  policyUri?: string | undefined;
  tosUri?: string | undefined;
}

const errorBox = (message: string | undefined) =>
  message ? html`<div class="error" role="alert" id="form-error">${message}</div>` : html``;

export function renderLoginPage(options: {
  action: string;
  signupUrl: string;
  csrf: string;
  client: ClientView;
  email?: string | undefined;
  error?: string | undefined;
}): string {
  return page(
    'Sign in',
    html`<h1>Sign in</h1>
<p class="lede">to continue to <strong>${options.client.name}</strong></p>
${errorBox(options.error)}
<form method="post" action="${options.action}" novalidate>
<input type="hidden" name="csrf" value="${options.csrf}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}"
  ${options.error ? raw('aria-describedby="form-error"') : ''} autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<p class="links">New here? <a href="${options.signupUrl}">Create your password</a> with the email your employer has.</p>
<p class="links">Lost your password? Ask your employer for a reset code, then use it to <a href="${options.signupUrl}">create a new one</a>.</p>`,
  );
}

export function renderSignupPage(options: {
  action: string;
  loginUrl: string;
  csrf: string;
  client: ClientView;
  sandbox: boolean;
  /** Production: only an invitation code proves who is signing up; elsewhere an employee ID does too. */
  invitationOnly: boolean;
  email?: string | undefined;
  employeeId?: string | undefined;
  invitationCode?: string | undefined;
  error?: string | undefined;
}): string {
  const employeeId = options.invitationOnly
    ? ''
    : html`<label for="employee_id">Employee ID</label>
<input id="employee_id" name="employee_id" autocomplete="off" value="${options.employeeId ?? ''}" aria-describedby="employee-hint">
<p class="hint" id="employee-hint">As it appears on your pay stub${options.sandbox ? ' (sandbox: see the demo workers in docs/integrators/sandbox.md)' : ''}.</p>
`;
  const codeHint = options.invitationOnly
    ? 'From the invitation your employer sent you. A reset code from them replaces a password you lost.'
    : 'If your employer sent you one: then the employee ID is not needed. A reset code replaces a lost password.';
  return page(
    'Create your password',
    html`<h1>Create your password</h1>
<p class="lede">Use the email your employer has on file. Then you can sign in to <strong>${options.client.name}</strong>.</p>
${errorBox(options.error)}
<form method="post" action="${options.action}" novalidate>
<input type="hidden" name="csrf" value="${options.csrf}">
<label for="email">Work email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}"
  ${options.error ? raw('aria-describedby="form-error"') : ''} autofocus>
${employeeId}<label for="invitation_code">Invitation code</label>
<input id="invitation_code" name="invitation_code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" ${options.invitationOnly ? raw('required') : ''} value="${options.invitationCode ?? ''}" aria-describedby="invitation-hint">
<p class="hint" id="invitation-hint">${codeHint}</p>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_LENGTH_MIN}" aria-describedby="password-hint">
<p class="hint" id="password-hint">At least ${PASSWORD_LENGTH_MIN} characters.</p>
<button type="submit">Create password and continue</button>
</form>
<p class="links">Already have a password? <a href="${options.loginUrl}">Sign in</a></p>`,
  );
}

/** The person signed in on this browser, as the consent page names them. */
export interface SignedInView {
  name: string;
  email?: string | undefined;
}

/**
 * The consent page names who is signed in, with "Not you?": a button of its own form (after the decision form,
 * tied to it by `form=`) that posts to `switchAction`, which signs that person out and shows the sign-in again.
 */
export function renderConsentPage(options: {
  action: string;
  switchAction: string;
  csrf: string;
  client: ClientView;
  scopes: string[];
  person: SignedInView;
}): string {
  const { client, person } = options;
  const email = person.email ? html`<br><span class="muted">${person.email}</span>` : '';
  const described = options.scopes.filter((scope) => Object.hasOwn(ALL_SCOPES, scope) && scope !== 'openid');
  return page(
    'Allow access',
    html`<div class="client">${client.logoUri ? html`<img src="${client.logoUri}" alt="">` : ''}
<h1><strong>${client.name}</strong> wants to access your account</h1></div>
<div class="who"><p>Signed in as <strong>${person.name}</strong>${email}</p>
<button type="submit" form="switch-account" class="link">Not you?</button></div>
<p class="lede">If you allow it, ${client.name} will be able to:</p>
<ul class="scopes">${described.map((scope) => html`<li>${ALL_SCOPES[scope as keyof typeof ALL_SCOPES]}</li>`)}
<li>Know who you are</li></ul>
${
  client.policyUri || client.tosUri
    ? html`<p class="links">Read ${client.name}'s ${client.policyUri ? html`<a href="${client.policyUri}" rel="noopener noreferrer">privacy policy</a>` : ''}${client.policyUri && client.tosUri ? ' and ' : ''}${client.tosUri ? html`<a href="${client.tosUri}" rel="noopener noreferrer">terms of service</a>` : ''}.</p>`
    : ''
}
<p class="links">You can take this access back at any time.</p>
<form method="post" action="${options.action}">
<input type="hidden" name="csrf" value="${options.csrf}">
<div class="actions">
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="allow">Allow</button>
</div>
</form>
<form method="post" action="${options.switchAction}" id="switch-account">
<input type="hidden" name="csrf" value="${options.csrf}">
</form>`,
  );
}

/**
 * An error page as a worker reads it: a plain title, what happened and what to do next; the technical code and
 * description, and the id of the request's log lines, only in small print for support.
 */
export interface ErrorPageContent {
  title: string;
  message: string;
  next: string;
  /** The OAuth error code (or our own), for support. */
  code?: string | undefined;
  /** The technical description that goes with the code, for support. */
  detail?: string | undefined;
  requestId?: string | undefined;
}

export function renderErrorPage(content: ErrorPageContent): string;
/**
 * The older form, still used outside src/oauth (load shedding): an OAuth code whose plain words are known
 * (`temporarily_unavailable`) is shown in those words with the description in small print; else a title and text.
 */
export function renderErrorPage(titleOrCode: string, description: string, requestId?: string): string;
export function renderErrorPage(
  contentOrTitle: ErrorPageContent | string,
  description?: string,
  requestId?: string,
): string {
  const content: ErrorPageContent =
    typeof contentOrTitle !== 'string'
      ? contentOrTitle
      : Object.hasOwn(PLAIN_WORDS, contentOrTitle)
        ? { ...PLAIN_WORDS[contentOrTitle]!, code: contentOrTitle, detail: description, requestId }
        : { title: contentOrTitle, message: description ?? '', next: START_AGAIN, requestId };
  const support = [
    content.code ? html`Code: <code>${content.code}</code>` : undefined,
    content.detail ? html`${content.detail}` : undefined,
    content.requestId ? html`Reference: <code>${content.requestId}</code>` : undefined,
  ]
    .filter((part) => part !== undefined)
    .flatMap((part, index) => (index === 0 ? [part] : [html` · `, part]));
  return page(
    content.title,
    html`<h1>${content.title}</h1>
<div class="error" role="alert">${content.message}</div>
<p>${content.next}</p>
${support.length > 0 ? html`<p class="support">For support: ${support}</p>` : ''}`,
  );
}

const START_AGAIN = 'Go back to the app you came from and start again.';
const SUPPORT_NEXT = `${START_AGAIN} If it happens again, contact the app's support and quote the details below.`;

const INVALID_LINK = {
  title: 'This sign-in link is not valid',
  message: 'This sign-in link is not valid or has expired.',
  next: SUPPORT_NEXT,
};
const EXPIRED = {
  title: 'This sign-in has expired',
  message: 'This sign-in took too long, was already finished, or was opened in another browser.',
  next: START_AGAIN,
};
const OUR_SIDE = {
  title: 'Something went wrong on our side',
  message: 'We could not finish this step. Nothing was changed.',
  next: `Try again in a moment. If it keeps happening, ${START_AGAIN.charAt(0).toLowerCase()}${START_AGAIN.slice(1)}`,
};
const BUSY = {
  title: 'Sign-in is busy right now',
  message: 'The service is busy or cannot reach its database, so nothing was done.',
  next: 'Try again in a moment.',
};

/** What the worker is told about an OAuth error code at the authorization or logout endpoint, in plain words. */
const PLAIN_WORDS: Record<string, Omit<ErrorPageContent, 'code' | 'detail' | 'requestId'>> = {
  invalid_client: {
    title: 'This sign-in link is not valid',
    message: 'The app that sent you here is not known to us, so we cannot sign you in to it.',
    next: SUPPORT_NEXT,
  },
  invalid_redirect_uri: {
    title: 'This sign-in link is not valid',
    message: 'The app that sent you here asked to send you back to an address it has not registered with us.',
    next: SUPPORT_NEXT,
  },
  unauthorized_client: {
    title: 'This app cannot sign you in',
    message: 'The app that sent you here is not allowed to sign people in this way.',
    next: SUPPORT_NEXT,
  },
  access_denied: {
    title: 'Access not allowed',
    message: 'The app was not allowed to access your account.',
    next: START_AGAIN,
  },
  server_error: OUR_SIDE,
  temporarily_unavailable: BUSY,
};

/**
 * The page for an error oidc-provider renders in the browser (its `renderError`): an unknown client, a redirect
 * URI that is not registered, a malformed or expired request, a sign-in session that is gone. `expired` is for a
 * request whose sign-in session or interaction was not found.
 */
export function renderAuthorizationErrorPage(options: {
  code: string;
  detail?: string | undefined;
  requestId?: string | undefined;
  expired?: boolean;
  signOut?: boolean;
}): string {
  const words = options.signOut
    ? {
        title: 'This sign-out link is not valid',
        message: 'This sign-out link is not valid or has expired, so you may still be signed in.',
        next: 'Close this window, or sign out again from the app you came from.',
      }
    : options.expired
      ? EXPIRED
      : (PLAIN_WORDS[options.code] ?? INVALID_LINK);
  return renderErrorPage({
    ...words,
    code: options.code,
    detail: options.detail,
    requestId: options.requestId,
  });
}

/**
 * The page for a request refused before it reached a page or oidc-provider (not found, wrong method, a body or
 * address that cannot be read, a failure or overload of ours), by its HTTP status; `code` is the OAuth error code
 * the same request would get as JSON.
 */
export function renderStatusErrorPage(options: {
  status: number;
  code: string;
  detail: string;
  requestId?: string | undefined;
}): string {
  const { status } = options;
  const words =
    status === 503
      ? BUSY
      : status >= 500
        ? OUR_SIDE
        : status === 404 || status === 405
          ? {
              title: 'Page not found',
              message: 'There is nothing to see at this address.',
              next: `If you were signing in, ${START_AGAIN.charAt(0).toLowerCase()}${START_AGAIN.slice(1)}`,
            }
          : status === 413 || status === 415
            ? {
                title: 'This form could not be sent',
                message: 'What was sent is not what this page accepts.',
                next: 'Go back, reload the page and try again.',
              }
            : INVALID_LINK;
  return renderErrorPage({
    ...words,
    code: options.code,
    detail: options.detail,
    requestId: options.requestId,
  });
}

/** The page for an interaction that cannot be found or continued (expired, already used, another browser's). */
export function renderExpiredPage(options: {
  code?: string | undefined;
  detail?: string | undefined;
  requestId?: string | undefined;
}): string {
  return renderErrorPage({ ...EXPIRED, code: options.code ?? 'session_not_found', ...options });
}

/** `form` is oidc-provider's own confirmation form (with its CSRF value); it is submitted by the buttons below. */
export function renderLogoutPage(form: string): string {
  return page(
    'Sign out',
    html`<h1>Sign out?</h1>
<p class="lede">You will be signed out of EWA on this device.</p>
${raw(form)}
<div class="actions">
<button type="submit" form="op.logoutForm" name="logout" value="no" class="secondary">Stay signed in</button>
<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
</div>`,
  );
}

export function renderLogoutSuccessPage(): string {
  return page('Signed out', html`<h1>You are signed out</h1><p>You can close this window.</p>`);
}

export function renderThrottledPage(retryAfterSeconds: number): string {
  return page(
    'Too many attempts',
    html`<h1>Too many attempts</h1>
<div class="error" role="alert">Wait ${Math.ceil(retryAfterSeconds / 60)} minute(s), then try again.</div>`,
  );
}

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
<p class="links">New here? <a href="${options.signupUrl}">Create your password</a> with the email your employer has.</p>`,
  );
}

export function renderSignupPage(options: {
  action: string;
  loginUrl: string;
  csrf: string;
  client: ClientView;
  sandbox: boolean;
  email?: string | undefined;
  employeeId?: string | undefined;
  error?: string | undefined;
}): string {
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
<label for="employee_id">Employee ID</label>
<input id="employee_id" name="employee_id" autocomplete="off" required value="${options.employeeId ?? ''}" aria-describedby="employee-hint">
<p class="hint" id="employee-hint">As it appears on your pay stub${options.sandbox ? ' (sandbox: see the demo data in the README)' : ''}.</p>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_LENGTH_MIN}" aria-describedby="password-hint">
<p class="hint" id="password-hint">At least ${PASSWORD_LENGTH_MIN} characters.</p>
<button type="submit">Create password and continue</button>
</form>
<p class="links">Already have a password? <a href="${options.loginUrl}">Sign in</a></p>`,
  );
}

export function renderConsentPage(options: {
  action: string;
  csrf: string;
  client: ClientView;
  scopes: string[];
}): string {
  const { client } = options;
  const described = options.scopes.filter((scope) => Object.hasOwn(ALL_SCOPES, scope) && scope !== 'openid');
  return page(
    'Allow access',
    html`<div class="client">${client.logoUri ? html`<img src="${client.logoUri}" alt="">` : ''}
<h1><strong>${client.name}</strong> wants to access your account</h1></div>
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
</form>`,
  );
}

/** `requestId`, when given, is shown for a person to quote: it is the id of the request's log lines. */
export function renderErrorPage(title: string, description: string, requestId?: string): string {
  return page(
    'Something went wrong',
    html`<h1>Something went wrong</h1>
<div class="error" role="alert"><strong>${title}</strong>: ${description}</div>
<p>Go back to the app you came from and try again.</p>
${requestId ? html`<p class="links">Reference: <code>${requestId}</code></p>` : ''}`,
  );
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

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { InteractionDetails, Provider } from 'oidc-provider';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/database-unavailable.ts';
import { authenticate, findPerson, fullName, normalizeEmail, signUp } from './accounts.ts';
import { findClient } from './clients.ts';
import { CSRF_COOKIE, type CsrfTokens } from './csrf.ts';
import { signUpWithInvitation } from './invitation-sign-up.ts';
import { accountAtAddressKey, addressKey, admitAttempt, recordSuccess } from './login-throttle.ts';
import {
  type ClientView,
  renderConsentPage,
  renderErrorPage,
  renderExpiredPage,
  renderLoginPage,
  renderSignupPage,
  renderThrottledPage,
} from './pages/pages.ts';
import { INTERACTION_PATH } from './provider-setup.ts';
import {
  checkCharset,
  checkedBody,
  decodeUtf8,
  formObject,
  parseUrlEncoded,
  refuseRepeatedNames,
} from './request-text.ts';

export interface InteractionOptions {
  /** The provider, made on first use (auth-app.ts). */
  provider: () => Promise<Provider>;
  config: Config;
  db: Db;
  csrf: CsrfTokens;
  now: () => Date;
}

type Form = Record<string, string | undefined>;
type Params = { uid: string };
const FORM_BYTES_MAX = 16_384;

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/**
 * The pages people see during an authorization request: sign in, create a password, allow or deny. Plain HTML
 * forms that work without JavaScript; every POST carries a CSRF value; the provider's own cookies tie each page to
 * its interaction.
 */
export async function interactionRoutes(app: FastifyInstance, options: InteractionOptions): Promise<void> {
  const { provider, config, db, csrf, now } = options;
  const sandbox = config.env === 'uat';
  // In production only the employer's one-time code proves who someone is: an employee ID is printed on pay stubs.
  const invitationOnly = config.env === 'production';
  const addressCeiling = (ip: string) => ({
    key: addressKey(ip),
    threshold: config.oauth.loginFailuresPerAddressBeforeBackoff,
  });

  // Forms only, read strictly (request-text.ts); any other media type is 415, answered as a page.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: FORM_BYTES_MAX },
    (request, body, done) => {
      try {
        checkCharset(request.headers['content-type']);
        const pairs = parseUrlEncoded(decodeUtf8(body as Buffer, 'form'), 'form');
        refuseRepeatedNames(pairs, 'form');
        (request as FastifyRequest & { [checkedBody]?: unknown })[checkedBody] = pairs;
        done(null, formObject(pairs));
      } catch (error) {
        done(error as Error);
      }
    },
  );

  const send = (reply: FastifyReply, status: number, markup: string) =>
    reply.code(status).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(markup);
  const throttled = (reply: FastifyReply, retryAfterSeconds: number) =>
    send(reply.header('Retry-After', String(retryAfterSeconds)), 429, renderThrottledPage(retryAfterSeconds));

  /** The provider, the interaction, its client and this browser's CSRF value; or a page saying the request is gone. */
  async function load(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    let details: InteractionDetails;
    const oidc = await provider();
    try {
      details = await oidc.interactionDetails(request.raw, reply.raw);
      // The provider finds the interaction by its cookie; the address must name the same one.
      if (details.uid !== request.params.uid)
        throw Object.assign(new Error(), { error: 'session_not_found' });
    } catch (error) {
      // The database out of reach for now is not an expired sign-in: 503 with Retry-After (auth-app.ts).
      if (isDatabaseUnavailable(error)) throw error;
      // Not found, expired, already finished, or this browser lacks the interaction's cookie (another browser's).
      const { error: code, error_description: detail } = error as {
        error?: unknown;
        error_description?: unknown;
      };
      send(
        reply,
        400,
        renderExpiredPage({
          code: typeof code === 'string' ? code : undefined,
          detail: typeof detail === 'string' ? detail : undefined,
          requestId: request.id,
        }),
      );
      return undefined;
    }
    const registered = await findClient(db, String(details.params.client_id ?? ''));
    const client: ClientView = {
      name: registered?.name ?? 'this app',
      logoUri: registered?.logoUri ?? undefined,
      policyUri: registered?.policyUri ?? undefined,
      tosUri: registered?.tosUri ?? undefined,
    };
    let cookie = cookieOf(request, CSRF_COOKIE);
    if (!cookie) {
      cookie = csrf.newCookie();
      const secure = config.env === 'production' ? '; Secure' : '';
      reply.header(
        'Set-Cookie',
        `${CSRF_COOKIE}=${cookie}; Path=${INTERACTION_PATH}; HttpOnly; SameSite=Lax; Max-Age=${config.oauth.interactionTtlSeconds}${secure}`,
      );
    }
    return { oidc, details, client, csrfValue: csrf.formValue(cookie, details.uid), cookie };
  }

  function checkCsrf(request: FastifyRequest, uid: string, reply: FastifyReply): boolean {
    if (csrf.isValid(cookieOf(request, CSRF_COOKIE), uid, (request.body as Form | undefined)?.csrf))
      return true;
    send(
      reply,
      403,
      renderErrorPage({
        title: 'Form expired',
        message: 'This form is no longer valid: it was open too long, or was opened in another window.',
        next: 'Go back, reload the page and try again.',
        code: 'csrf_mismatch',
        requestId: request.id,
      }),
    );
    return false;
  }

  const finish = async (
    oidc: Provider,
    request: FastifyRequest,
    reply: FastifyReply,
    result: Record<string, unknown>,
    merge: boolean,
  ) => {
    const returnTo = await oidc.interactionResult(request.raw, reply.raw, result, {
      mergeWithLastSubmission: merge,
    });
    return reply.code(303).header('Cache-Control', 'no-store').redirect(returnTo, 303);
  };

  const urls = (uid: string) => ({
    login: `${INTERACTION_PATH}/${uid}/login`,
    signup: `${INTERACTION_PATH}/${uid}/signup`,
    consent: `${INTERACTION_PATH}/${uid}/consent`,
    switchAccount: `${INTERACTION_PATH}/${uid}/switch-account`,
    page: `${INTERACTION_PATH}/${uid}`,
  });

  app.get<{ Params: Params }>(`${INTERACTION_PATH}/:uid`, async (request, reply) => {
    const loaded = await load(request, reply);
    if (!loaded) return reply;
    const { details, client, csrfValue } = loaded;
    const to = urls(details.uid);
    if (details.prompt.name === 'login') {
      return send(
        reply,
        200,
        renderLoginPage({ action: to.login, signupUrl: to.signup, csrf: csrfValue, client }),
      );
    }
    const scopes = String(details.params.scope ?? '')
      .split(' ')
      .filter(Boolean);
    const person = details.session ? await findPerson(db, details.session.accountId) : undefined;
    return send(
      reply,
      200,
      renderConsentPage({
        action: to.consent,
        switchAction: to.switchAccount,
        csrf: csrfValue,
        client,
        scopes,
        person: person
          ? { name: fullName(person) || (person.email ?? 'your account'), email: person.email ?? undefined }
          : { name: 'your account' },
      }),
    );
  });

  app.post<{ Params: Params; Body: Form }>(`${INTERACTION_PATH}/:uid/login`, async (request, reply) => {
    const loaded = await load(request, reply);
    if (!loaded) return reply;
    const { details, client, csrfValue } = loaded;
    if (!checkCsrf(request, details.uid, reply)) return reply;
    const email = normalizeEmail(String(request.body?.email ?? '')).slice(0, 320);
    const account = {
      key: accountAtAddressKey(email, request.ip),
      threshold: config.oauth.loginFailuresBeforeBackoff,
    };
    const address = addressCeiling(request.ip);
    // Counted before the password is checked, so that tries sent at once cannot all pass a check made before any
    // of them failed.
    const admission = await admitAttempt(db, [account, address], now());
    if (!admission.admitted) return throttled(reply, admission.retryAfterSeconds);
    const personId = await authenticate(db, email, String(request.body?.password ?? ''));
    if (!personId) {
      const to = urls(details.uid);
      return send(
        reply,
        401,
        renderLoginPage({
          action: to.login,
          signupUrl: to.signup,
          csrf: csrfValue,
          client,
          email,
          error: 'That email and password do not match an account.',
        }),
      );
    }
    await recordSuccess(db, admission, { reset: [account], giveBack: [address] });
    return finish(loaded.oidc, request, reply, { login: { accountId: personId, amr: ['pwd'] } }, false);
  });

  app.get<{ Params: Params }>(`${INTERACTION_PATH}/:uid/signup`, async (request, reply) => {
    const loaded = await load(request, reply);
    if (!loaded) return reply;
    const to = urls(loaded.details.uid);
    return send(
      reply,
      200,
      renderSignupPage({
        action: to.signup,
        loginUrl: to.page,
        csrf: loaded.csrfValue,
        client: loaded.client,
        sandbox,
        invitationOnly,
      }),
    );
  });

  app.post<{ Params: Params; Body: Form }>(`${INTERACTION_PATH}/:uid/signup`, async (request, reply) => {
    const loaded = await load(request, reply);
    if (!loaded) return reply;
    const { details, client, csrfValue } = loaded;
    if (!checkCsrf(request, details.uid, reply)) return reply;
    const to = urls(details.uid);
    const email = String(request.body?.email ?? '');
    const employeeId = invitationOnly ? '' : String(request.body?.employee_id ?? '');
    const invitationCode = String(request.body?.invitation_code ?? '');
    const password = String(request.body?.password ?? '');
    const address = addressCeiling(request.ip);
    const admission = await admitAttempt(db, [address], now());
    if (!admission.admitted) return throttled(reply, admission.retryAfterSeconds);
    const result =
      invitationOnly || invitationCode.trim()
        ? await signUpWithInvitation(db, { email, code: invitationCode, password, now: now() })
        : await signUp(db, { email, employeeId, password });
    if ('problem' in result) {
      return send(
        reply,
        400,
        renderSignupPage({
          action: to.signup,
          loginUrl: to.page,
          csrf: csrfValue,
          client,
          sandbox,
          invitationOnly,
          email,
          employeeId,
          invitationCode: invitationCode.slice(0, 64),
          error: result.problem,
        }),
      );
    }
    await recordSuccess(db, admission, { reset: [], giveBack: [address] });
    return finish(
      loaded.oidc,
      request,
      reply,
      { login: { accountId: result.personId, amr: ['pwd'] } },
      false,
    );
  });

  app.post<{ Params: Params; Body: Form }>(`${INTERACTION_PATH}/:uid/consent`, async (request, reply) => {
    const loaded = await load(request, reply);
    if (!loaded) return reply;
    const { details } = loaded;
    if (!checkCsrf(request, details.uid, reply)) return reply;
    if (details.prompt.name !== 'consent' || !details.session) {
      return send(
        reply,
        400,
        renderErrorPage({
          title: 'Nothing to allow here',
          message: 'This sign-in is not waiting for you to allow or deny anything any more.',
          next: 'Go back to the app you came from and start again.',
          code: 'consent_not_expected',
          requestId: request.id,
        }),
      );
    }
    if (request.body?.decision !== 'allow') {
      return finish(
        loaded.oidc,
        request,
        reply,
        { error: 'access_denied', error_description: 'The person denied the request.' },
        false,
      );
    }
    const { Grant } = loaded.oidc;
    const grant = details.grantId
      ? await Grant.find(details.grantId)
      : new Grant({
          accountId: details.session.accountId,
          clientId: String(details.params.client_id),
        });
    if (!grant)
      return send(
        reply,
        400,
        renderExpiredPage({ detail: 'the grant of this sign-in is gone', requestId: request.id }),
      );
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    const grantId = await grant.save();
    return finish(loaded.oidc, request, reply, { consent: { grantId } }, true);
  });

  /**
   * "Not you?" on the consent page: signs the person out of this browser (their sign-in session ends) and shows
   * the sign-in page of the same authorization request, so that someone else can sign in; the code then is theirs.
   * The interaction forgets the session, the grant and the earlier sign-in, and asks for a login, as
   * oidc-provider itself does when another account signs in during an interaction (see its `resume`).
   */
  app.post<{ Params: Params; Body: Form }>(
    `${INTERACTION_PATH}/:uid/switch-account`,
    async (request, reply) => {
      const loaded = await load(request, reply);
      if (!loaded) return reply;
      const { details } = loaded;
      if (!checkCsrf(request, details.uid, reply)) return reply;
      if (details.session) {
        const session = await loaded.oidc.Session.findByUid(details.session.uid);
        await session?.destroy();
      }
      const interaction = details;
      interaction.session = undefined;
      interaction.grantId = undefined;
      interaction.lastSubmission = undefined;
      interaction.result = undefined;
      interaction.prompt = { name: 'login', reasons: ['switch_account'], details: {} };
      await interaction.persist();
      return reply.code(303).header('Cache-Control', 'no-store').redirect(urls(details.uid).page, 303);
    },
  );
}

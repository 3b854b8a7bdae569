/**
 * Sessions of signed-in people, in memory: a random id in an HttpOnly cookie, the tokens on this side only. A
 * restart signs everyone out, which is fine for an example; a real app keeps them in its own store.
 */
import { randomBytes } from 'node:crypto';

const COOKIE = 'partner_session';
const SESSIONS_MAX = 1000;
/** Webhook events kept per person, to show again to a page that connects after they arrived. */
const RECENT_EVENTS_MAX = 20;

export class Sessions {
  #sessions = new Map();
  #recentEvents = new Map();

  /** The session of a request, or undefined. */
  find(request) {
    const id = cookieValue(request.headers.cookie, COOKIE);
    return id ? this.#sessions.get(id) : undefined;
  }

  /** The request's session, made (with its cookie on the response) when it has none. */
  findOrStart(request, response) {
    const found = this.find(request);
    if (found) return found;
    if (this.#sessions.size >= SESSIONS_MAX) this.#sessions.delete(this.#sessions.keys().next().value);
    const session = { streams: new Set() };
    this.#giveId(session, response);
    return session;
  }

  /** A new id for a session that has just signed in, so that an id known before the sign-in is worth nothing. */
  renew(session, response) {
    this.#sessions.delete(session.id);
    this.#giveId(session, response);
  }

  #giveId(session, response) {
    session.id = randomBytes(24).toString('base64url');
    this.#sessions.set(session.id, session);
    // SameSite=Lax: sent when the authorization server redirects back here, never on another site's POST.
    response.setHeader('set-cookie', `${COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax`);
  }

  end(session, response) {
    for (const stream of session.streams) stream.end();
    this.#sessions.delete(session.id);
    response.setHeader('set-cookie', `${COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`);
  }

  /** Sends a webhook event to the pages of the person it is about (server-sent events), and keeps it for later. */
  publish(personId, event) {
    const recent = [...(this.#recentEvents.get(personId) ?? []), event].slice(-RECENT_EVENTS_MAX);
    this.#recentEvents.set(personId, recent);
    for (const session of this.#sessions.values())
      if (session.personId === personId) for (const stream of session.streams) sendEvent(stream, event);
  }

  /** Opens an event stream for a page of this session, starting with the person's recent events. */
  subscribe(session, response) {
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    for (const event of this.#recentEvents.get(session.personId) ?? []) sendEvent(response, event);
    session.streams.add(response);
    response.on('close', () => session.streams.delete(response));
  }
}

function sendEvent(stream, event) {
  stream.write(`data: ${JSON.stringify(event)}\n\n`);
}

function cookieValue(header, name) {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

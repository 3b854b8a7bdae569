import type { Config } from '../config.ts';
import { AppError } from '../errors/app-error.ts';
import { CardFingerprints } from './card-fingerprint.ts';
import type { CardTokenKeys } from './card-token.ts';
import { validateCardRequest, wellFormedCardNumber } from './card-validation.ts';
import { clientAddressKey } from './client-address.ts';
import { type RateLimitDecision, RateLimiter } from './rate-limit.ts';
import type { CardLimitName } from './shared-rate-limits.ts';
import { UAT_TEST_CARDS } from './test-cards.ts';

const MINUTE_MS = 60_000;
/** Per limit: a flood from more addresses or cards than this forgets the oldest windows instead of growing. */
export const RATE_LIMIT_KEYS_MAX = 100_000;
export const RATE_LIMIT_WINDOW_MS = MINUTE_MS;

/**
 * Counts an attempt in the store all processes share (Redis); rejects when it does not answer. Absent without
 * REDIS_URL: then each process counts alone.
 */
export type SharedLimit = (limit: CardLimitName, key: string) => Promise<RateLimitDecision>;

/**
 * Card data in, a short-lived encrypted card token out. Built once per server, so that both listeners that serve
 * it share one key set and one pair of rate limits: counted in Redis when the listener passes a shared limit,
 * else (and while Redis does not answer) in this process (see RateLimiter).
 */
export class CardTokenizer {
  readonly #keys: CardTokenKeys;
  readonly #fingerprints: CardFingerprints;
  readonly #perClient: RateLimiter;
  readonly #perCard: RateLimiter;
  readonly #config: Config;
  readonly #now: () => Date;

  private constructor(config: Config, keys: CardTokenKeys, now: () => Date) {
    this.#config = config;
    this.#keys = keys;
    this.#now = now;
    this.#fingerprints = new CardFingerprints(config.masterKey);
    const window = { windowMs: RATE_LIMIT_WINDOW_MS, keysMax: RATE_LIMIT_KEYS_MAX, now };
    this.#perClient = new RateLimiter({ ...window, limit: config.cards.tokensPerIpPerMinute });
    this.#perCard = new RateLimiter({ ...window, limit: config.cards.tokensPerCardPerMinute });
  }

  static create(config: Config, keys: CardTokenKeys, now: () => Date): CardTokenizer {
    return new CardTokenizer(config, keys, now);
  }

  /** Counts an attempt from this client address, whatever it sends; throws TOO_MANY_REQUESTS past the limit. */
  async admitClient(ip: string, shared?: SharedLimit): Promise<void> {
    const decision = await counted(this.#perClient, 'card-client', clientAddressKey(ip), shared);
    if (!decision.allowed) {
      throw tooManyRequests(
        `Too many card token requests from this address; try again in ${decision.retryAfterSeconds} seconds.`,
        decision.retryAfterSeconds,
      );
    }
  }

  /**
   * Steps, in order: count the attempt against its card (when the number is one a network could issue, so that
   * attempts with a wrong expiry or name count too), validate every field, keep the sandbox to its test cards,
   * then issue the token, which leaves the CVV out.
   */
  async tokenize(body: unknown, shared?: SharedLimit): Promise<{ token: string }> {
    const now = this.#now();
    const validation = validateCardRequest(body, now);
    await this.#admitCard(
      validation.ok ? validation.request.card.card_number : wellFormedCardNumber(body),
      shared,
    );
    if (!validation.ok) throw validation.error;
    const { card } = validation.request;
    if (this.#isSandbox() && !UAT_TEST_CARDS.has(card.card_number)) {
      throw new AppError('INVALID_FIELDS', {
        detail:
          'card_number is not a sandbox test card: this sandbox (EWA_ENV=uat) tokenizes only the test cards listed in docs/integrators/card-tokenization.md.',
        source: { pointer: '/card_number' },
      });
    }
    const { token } = await this.#keys.issue(card, now, this.#config.cards.tokenTtlSeconds);
    return { token };
  }

  async #admitCard(cardNumber: string | undefined, shared: SharedLimit | undefined): Promise<void> {
    // The sandbox's three test cards are shared by every developer: a per-card limit on them would let one
    // developer lock out all the others (API.md: fraud checks skip them).
    if (cardNumber === undefined || (this.#isSandbox() && UAT_TEST_CARDS.has(cardNumber))) return;
    // Keyed by fingerprint, so that the limiter's memory never holds a card number.
    const decision = await counted(this.#perCard, 'card', this.#fingerprints.of(cardNumber), shared);
    if (!decision.allowed) {
      throw tooManyRequests(
        `Too many card token requests for this card; try again in ${decision.retryAfterSeconds} seconds.`,
        decision.retryAfterSeconds,
      );
    }
  }

  #isSandbox(): boolean {
    return this.#config.env === 'uat';
  }
}

/**
 * The shared count when there is one and it answers; else this process's. Redis away must neither refuse every
 * card (fail closed would stop people adding cards) nor lift the limit (fail open would let card testing through).
 */
async function counted(
  local: RateLimiter,
  limit: CardLimitName,
  key: string,
  shared: SharedLimit | undefined,
): Promise<RateLimitDecision> {
  if (shared) {
    try {
      return await shared(limit, key);
    } catch {
      // Counted here instead; redis.ts warns that Redis is away.
    }
  }
  return local.hit(key);
}

function tooManyRequests(detail: string, retryAfterSeconds: number): AppError {
  return new AppError('TOO_MANY_REQUESTS', { detail, headers: { 'Retry-After': String(retryAfterSeconds) } });
}

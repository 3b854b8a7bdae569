import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import { AppError } from '../../errors/app-error.ts';
import { CardFingerprints } from '../../tokenization/card-fingerprint.ts';
import { CardTokenError, type CardTokenKeys } from '../../tokenization/card-token.ts';
import { spendCardToken } from '../../tokenization/card-token-uses.ts';
import { UAT_TEST_CARDS } from '../../tokenization/test-cards.ts';
import { CardVault } from '../../tokenization/vault.ts';
import { checkDetailsMatchCard, isExpired, readCardDetails } from './card-details.ts';
import { type AccountRow, hasActiveAccountWithFingerprint, insertCardAccount } from './store.ts';

/** A new account checked as far as it can be outside the transaction that writes it. */
export interface PreparedAccount {
  fingerprint: string;
  duplicateDetail: string;
  /** A check that needs the transaction: whether the same card is another person's. */
  checkAcrossPeople?: (tx: Tx, personId: string) => Promise<void>;
  insert(tx: Tx, row: { id: string; personId: string; name: string; now: Date }): Promise<AccountRow>;
}

const TOKEN = { pointer: '/data/attributes/details/token' };

/**
 * Debit cards come in as one-time card tokens of the tokenization endpoint. The token is opened here, spent by
 * this attempt, compared with the details the person sent; the card number goes to the vault and nowhere else.
 */
export class CardAccounts {
  readonly #db: Db;
  readonly #config: Config;
  readonly #keys: CardTokenKeys;
  readonly #fingerprints: CardFingerprints;
  readonly #vault: CardVault;

  constructor(db: Db, config: Config, keys: CardTokenKeys) {
    this.#db = db;
    this.#config = config;
    this.#keys = keys;
    this.#fingerprints = new CardFingerprints(config.masterKey);
    this.#vault = new CardVault(config.cards.vaultKeys);
  }

  async prepare(rawDetails: Record<string, unknown>, now: Date): Promise<PreparedAccount> {
    const details = readCardDetails(rawDetails);
    let opened: Awaited<ReturnType<CardTokenKeys['open']>>;
    try {
      opened = await this.#keys.open(details.token, now);
    } catch (error) {
      if (!(error instanceof CardTokenError)) throw error;
      throw new AppError('INVALID_CARD_TOKEN', {
        detail:
          'details.token is not a card token of this server, or it has expired; tokenize the card again.',
        source: TOKEN,
      });
    }
    if (!(await spendCardToken(this.#db, opened.jti, opened.expiresAt, now))) {
      throw new AppError('INVALID_CARD_TOKEN', {
        detail:
          'details.token was already used; a card token is good for one attempt. Tokenize the card again.',
        source: TOKEN,
      });
    }
    const { card } = opened;
    checkDetailsMatchCard(details, card);
    if (isExpired(card, now)) {
      throw new AppError('INVALID_DEBIT_CARD', { detail: 'The card has expired.' });
    }
    const number = card.card_number;
    if (this.#config.cards.binBlockList.some((bin) => number.startsWith(bin))) {
      throw new AppError('DEBIT_CARD_CREATION_BLOCKED');
    }
    const fingerprint = this.#fingerprints.of(number);
    const testCard = UAT_TEST_CARDS.has(number) && this.#config.env === 'uat';
    const issuer = details.issuer ?? number.slice(0, 6);
    return {
      fingerprint,
      duplicateDetail: 'This person already has this card.',
      // One real card belongs to one person; the sandbox's test cards may be on everyone.
      checkAcrossPeople: testCard
        ? undefined
        : async (tx, personId) => {
            if (await hasActiveAccountWithFingerprint(tx, personId, fingerprint, 'others')) {
              throw new AppError('INVALID_DEBIT_CARD', {
                detail: "This card is on another person's account.",
              });
            }
          },
      insert: async (tx, { id, personId, name, now: at }) => {
        const vaulted = await this.#vault.store(
          tx,
          {
            number,
            fingerprint,
            expirationMonth: Number(card.expiration_month),
            expirationYear: Number(card.expiration_year),
          },
          at,
        );
        return insertCardAccount(tx, {
          id,
          personId,
          name,
          currency: 'USD',
          details: {
            last_four: vaulted.lastFour,
            issuer,
            first_name: card.first_name,
            last_name: card.last_name,
            expiration_month: card.expiration_month,
            expiration_year: card.expiration_year,
          },
          vaultCardId: vaulted.id,
          fingerprint,
          now: at,
        });
      },
    };
  }
}

import { sql } from 'kysely';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import { AppError } from '../../errors/app-error.ts';
import { CardIntake } from '../../tokenization/card-intake.ts';
import type { CardTokenKeys } from '../../tokenization/card-token.ts';
import { checkDetailsMatchCard, readCardDetails } from './card-details.ts';
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
 * Debit cards come in as one-time card tokens of the tokenization endpoint. The card intake opens and spends the
 * token; this side compares the card with the details the person sent and applies the rules. The card number
 * itself never reaches this module: the card is sealed into the vault by the tokenization module.
 */
export class CardAccounts {
  readonly #config: Config;
  readonly #intake: CardIntake;

  constructor(db: Db, config: Config, keys: CardTokenKeys) {
    this.#config = config;
    this.#intake = new CardIntake(db, config, keys);
  }

  async prepare(rawDetails: Record<string, unknown>, now: Date): Promise<PreparedAccount> {
    const details = readCardDetails(rawDetails);
    const card = await this.#intake.receive(details.token, now);
    if (card === 'invalid') {
      throw new AppError('INVALID_CARD_TOKEN', {
        detail:
          'details.token is not a card token of this server, or it has expired; tokenize the card again.',
        source: TOKEN,
      });
    }
    if (card === 'already used') {
      throw new AppError('INVALID_CARD_TOKEN', {
        detail:
          'details.token was already used; a card token is good for one attempt. Tokenize the card again.',
        source: TOKEN,
      });
    }
    checkDetailsMatchCard(details, card);
    if (card.isExpired(now)) {
      throw new AppError('INVALID_DEBIT_CARD', { detail: 'The card has expired.' });
    }
    if (this.#config.cards.binBlockList.some((bin) => card.startsWith(bin))) {
      throw new AppError('DEBIT_CARD_CREATION_BLOCKED');
    }
    const { fingerprint, holder } = card;
    const testCard = card.isSandboxTestCard && this.#config.env === 'uat';
    const issuer = details.issuer ?? card.bin;
    return {
      fingerprint,
      duplicateDetail: 'This person already has this card.',
      // One real card belongs to one person; the sandbox's test cards may be on everyone.
      checkAcrossPeople: testCard
        ? undefined
        : async (tx, personId) => {
            // Two people adding one card at once would each find no other account with it: the card's own lock,
            // held to commit, makes the second wait for the first and see its account.
            await sql`select pg_advisory_xact_lock(hashtextextended(${`card:${fingerprint}`}, 0))`.execute(
              tx,
            );
            if (await hasActiveAccountWithFingerprint(tx, personId, fingerprint, 'others')) {
              throw new AppError('INVALID_DEBIT_CARD', {
                detail: "This card is on another person's account.",
              });
            }
          },
      insert: async (tx, { id, personId, name, now: at }) => {
        const vaulted = await card.store(tx, at);
        return insertCardAccount(tx, {
          id,
          personId,
          name,
          currency: 'USD',
          details: {
            last_four: vaulted.lastFour,
            issuer,
            first_name: holder.firstName,
            last_name: holder.lastName,
            expiration_month: holder.expirationMonth,
            expiration_year: holder.expirationYear,
          },
          vaultCardId: vaulted.id,
          fingerprint,
          now: at,
        });
      },
    };
  }
}

import type { BankAccountSecrets } from '../crypto/bank-account-secrets.ts';
import type { Tx } from '../db/transaction.ts';
import { maskNumber, UAT_ROUTING_NUMBER } from '../domain/routing-number.ts';
import { insertBankAccount } from '../resources/accounts/store.ts';

export interface DemoBankAccount {
  id: string;
  personId: string;
  firstName: string;
  lastName: string;
  accountNumber: string;
  now: Date;
}

/**
 * A checking account at the sandbox's routing number, stored as `POST /rest/accounts` stores one: the number sealed
 * under the master key and bound to the account's id, a keyed fingerprint for duplicates, both numbers masked in
 * the details. The seed cannot go through AccountService, which adds accounts only for a signed-in person.
 */
export async function insertDemoBankAccount(
  tx: Tx,
  secrets: BankAccountSecrets,
  account: DemoBankAccount,
): Promise<void> {
  await insertBankAccount(tx, {
    id: account.id,
    personId: account.personId,
    subtype: 'CHECKING',
    name: 'Checking',
    currency: 'USD',
    details: {
      first_name: account.firstName,
      last_name: account.lastName,
      routing_number: maskNumber(UAT_ROUTING_NUMBER),
      account_number: maskNumber(account.accountNumber),
    },
    routingNumber: UAT_ROUTING_NUMBER,
    accountNumberSealed: secrets.sealAccountNumber(account.id, account.accountNumber),
    fingerprint: secrets.fingerprint(UAT_ROUTING_NUMBER, account.accountNumber),
    now: account.now,
  });
}

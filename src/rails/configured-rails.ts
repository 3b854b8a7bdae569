import type { Config } from '../config.ts';
import { AchFileSecrets } from '../crypto/ach-file-secrets.ts';
import { BankAccountSecrets } from '../crypto/bank-account-secrets.ts';
import type { Db } from '../db/database.ts';
import { readAchBankAccounts } from './ach/ach-bank-accounts.ts';
import { type AchRail, createAchRail } from './ach/ach-rail.ts';
import type { PaymentRail } from './payment-rail.ts';
import { routeByDestination } from './routed-rail.ts';
import { createSandboxRail } from './sandbox-rail.ts';

/**
 * The rails of EWA_RAIL, for every process that moves money (the server and the CLI alike): the sandbox for
 * everything, or ACH through Nacha files for bank accounts. Cards stay on the sandbox in UAT; in production no rail
 * pays cards until a push-to-card adapter exists (docs/design/rails.md), so advances to a card are refused before
 * anything is written, and the sandbox never reports money settled that did not move.
 */
export function configuredRails(
  config: Config,
  db: Db,
  now: () => Date,
): { rail: PaymentRail; ach?: AchRail } {
  const sandbox = createSandboxRail({ instantDelayMs: config.money.sandboxInstantSettleSeconds * 1000 });
  if (config.money.rail !== 'ach') return { rail: sandbox };
  const secrets = new BankAccountSecrets(config.masterKey);
  const { ach } = config.money;
  const bank = createAchRail({
    db,
    identity: ach,
    outboundDir: ach.outboundDir,
    inboundDir: ach.inboundDir,
    bankAccounts: (ids, tx) =>
      readAchBankAccounts(tx, ids, (id, sealed) => secrets.openAccountNumber(id, sealed)),
    fileSecrets: new AchFileSecrets(config.masterKey),
    now,
  });
  if (config.env === 'production') return { rail: bank, ach: bank };
  return { rail: routeByDestination(bank, sandbox), ach: bank };
}

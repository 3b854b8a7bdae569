import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { SystemLedger } from '../ledger/ledger-accounts.ts';
import type { PaymentRail } from '../rails/payment-rail.ts';
import { createSandboxRail } from '../rails/sandbox-rail.ts';
import { TransferService } from './advances/advance-service.ts';
import { EarningsRecorder } from './earnings/earnings-recorder.ts';

/** The money services of one process, sharing one system ledger cache and one rail. */
export interface MoneyCore {
  db: Db;
  ledger: SystemLedger;
  rail: PaymentRail;
  earnings: EarningsRecorder;
  transfers: TransferService;
}

export function createMoneyCore(db: Db, config: Config, rail?: PaymentRail): MoneyCore {
  const ledger = new SystemLedger(db);
  const theRail =
    rail ?? createSandboxRail({ instantDelayMs: config.money.sandboxInstantSettleSeconds * 1000 });
  return {
    db,
    ledger,
    rail: theRail,
    earnings: new EarningsRecorder(db, ledger),
    transfers: new TransferService({
      db,
      ledger,
      rail: theRail,
      duplicateWindowMs: config.money.duplicateTransferWindowSeconds * 1000,
    }),
  };
}

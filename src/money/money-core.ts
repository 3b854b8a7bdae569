import type { Config, OutboxConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { SystemLedger } from '../ledger/ledger-accounts.ts';
import { type DispatchReport, OutboxDispatcher, type OutboxLogger } from '../outbox/outbox-dispatcher.ts';
import type { AchRail } from '../rails/ach/ach-rail.ts';
import type { PaymentRail } from '../rails/payment-rail.ts';
import { createSandboxRail } from '../rails/sandbox-rail.ts';
import { applyAchReturns } from './ach-returns.ts';
import { TransferService } from './advances/advance-service.ts';
import { EarningsRecorder } from './earnings/earnings-recorder.ts';
import { type PayrollProgress, type PayrollReport, runPayroll } from './payroll.ts';
import { railPaymentHandler } from './rail-payments.ts';
import { type SettlementReport, settleDue } from './settlement.ts';

/** The money services of one process, sharing one system ledger cache, one rail and one outbox dispatcher. */
export interface MoneyCore {
  db: Db;
  ledger: SystemLedger;
  rail: PaymentRail;
  earnings: EarningsRecorder;
  transfers: TransferService;
  /** The ACH rail, when bank accounts are paid through Nacha files (its files are cut on a schedule). */
  ach: AchRail | undefined;
  /** Cuts the ACH files due by `now` and applies the return files the bank left (nothing without ACH). */
  exchangeAchFiles(now: Date): Promise<Record<string, number>>;
  /** Sends what money changes wrote to the outbox, after they commit. */
  outbox: OutboxDispatcher;
  /** Sends the rail every instruction due by `now`, then applies every outcome the rail knows by then. */
  settle(now: Date): Promise<SettlementReport & { sent: DispatchReport }>;
  /** Payday as of `now`; its payouts are sent by `settle` or the dispatcher. */
  payroll(now: Date, options?: { batchSize?: number; onProgress?: PayrollProgress }): Promise<PayrollReport>;
}

export interface MoneyCoreOptions {
  rail?: PaymentRail;
  ach?: AchRail;
  logger?: OutboxLogger;
  now?: () => Date;
  /** The backoff's jitter, in [0, 1). */
  random?: () => number;
}

const SILENT: OutboxLogger = { warn: () => {}, error: () => {} };

/** The outbox dispatcher that sends rail instructions (the settings' defaults are the configuration's). */
export function railDispatcher(
  db: Db,
  ledger: SystemLedger,
  rail: PaymentRail,
  options: Omit<MoneyCoreOptions, 'rail'> & { settings?: OutboxConfig } = {},
): OutboxDispatcher {
  const settings = options.settings ?? {
    pollMs: 1000,
    leaseSeconds: 60,
    sendTimeoutSeconds: 20,
    retryMaxSeconds: 3600,
  };
  return new OutboxDispatcher({
    db,
    handlers: [railPaymentHandler(rail, ledger)],
    now: options.now ?? (() => new Date()),
    random: options.random ?? Math.random,
    logger: options.logger ?? SILENT,
    leaseMs: settings.leaseSeconds * 1000,
    sendTimeoutMs: settings.sendTimeoutSeconds * 1000,
    batchSize: 100,
    concurrency: 8,
    backoffBaseMs: 1000,
    backoffMaxMs: settings.retryMaxSeconds * 1000,
  });
}

export function createMoneyCore(db: Db, config: Config, options: MoneyCoreOptions = {}): MoneyCore {
  const ledger = new SystemLedger(db);
  const rail =
    options.rail ?? createSandboxRail({ instantDelayMs: config.money.sandboxInstantSettleSeconds * 1000 });
  const { rail: _rail, ach: _ach, ...dispatcherOptions } = options;
  const outbox = railDispatcher(db, ledger, rail, { ...dispatcherOptions, settings: config.money.outbox });
  return {
    db,
    ledger,
    rail,
    earnings: new EarningsRecorder(db, ledger),
    transfers: new TransferService({
      db,
      ledger,
      duplicateWindowMs: config.money.duplicateTransferWindowSeconds * 1000,
    }),
    outbox,
    ach: options.ach,
    async exchangeAchFiles(now) {
      const { ach } = options;
      if (!ach) return {};
      const files = await ach.cutFiles(now);
      const returns = await ach.readReturnFiles(now, (tx, matched) =>
        applyAchReturns(tx, ledger, matched, now),
      );
      return {
        ...files,
        returnFiles: returns.files,
        returns: returns.returns,
        unmatched: returns.unmatched,
        refused: returns.refused,
      };
    },
    async settle(now) {
      const sent = await outbox.dispatchDue(now);
      return { ...(await settleDue(db, ledger, rail, now)), sent };
    },
    payroll: (now, payrollOptions) => runPayroll(db, ledger, now, payrollOptions),
  };
}

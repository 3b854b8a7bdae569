import type { Config, OutboxConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { SystemLedger } from '../ledger/ledger-accounts.ts';
import { type DispatchReport, OutboxDispatcher, type OutboxLogger } from '../outbox/outbox-dispatcher.ts';
import type { AchRail } from '../rails/ach/ach-rail.ts';
import { configuredRails } from '../rails/configured-rails.ts';
import type { PaymentRail } from '../rails/payment-rail.ts';
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
  /** The rail to pay through instead of EWA_RAIL's (tests, embedding). */
  rail?: PaymentRail | undefined;
  logger?: OutboxLogger;
  now?: () => Date;
  /** Real time, when `now` is the sandbox's: the outbox's leases run on it (OutboxDispatcherOptions.realNow). */
  realNow?: () => Date;
  /** The backoff's jitter, in [0, 1). */
  random?: () => number;
}

const SILENT: OutboxLogger = { warn: () => {}, error: () => {} };

/** The outbox dispatcher that sends rail instructions. */
export function railDispatcher(
  db: Db,
  ledger: SystemLedger,
  rail: PaymentRail,
  settings: OutboxConfig,
  options: Pick<MoneyCoreOptions, 'logger' | 'now' | 'realNow' | 'random'> = {},
): OutboxDispatcher {
  return new OutboxDispatcher({
    db,
    handlers: [railPaymentHandler(rail, ledger)],
    now: options.now ?? (() => new Date()),
    ...(options.realNow ? { realNow: options.realNow } : {}),
    random: options.random ?? Math.random,
    logger: options.logger ?? SILENT,
    leaseMs: settings.leaseSeconds * 1000,
    sendTimeoutMs: settings.sendTimeoutSeconds * 1000,
    batchSize: 500,
    concurrency: 8,
    backoffBaseMs: 1000,
    backoffMaxMs: settings.retryMaxSeconds * 1000,
  });
}

export function createMoneyCore(db: Db, config: Config, options: MoneyCoreOptions = {}): MoneyCore {
  const ledger = new SystemLedger(db);
  const clock = options.now ?? (() => new Date());
  const { rail, ach } = options.rail
    ? { rail: options.rail, ach: undefined }
    : configuredRails(config, db, clock);
  const outbox = railDispatcher(db, ledger, rail, config.money.outbox, options);
  return {
    db,
    ledger,
    rail,
    earnings: new EarningsRecorder(db, ledger),
    transfers: new TransferService({
      db,
      ledger,
      duplicateWindowMs: config.money.duplicateTransferWindowSeconds * 1000,
      payableDestinations: rail.destinations,
      instantDestinations: rail.instantDestinations,
    }),
    outbox,
    ach,
    async exchangeAchFiles(now) {
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
        notifications: returns.notifications,
      };
    },
    async settle(now) {
      const sent = await outbox.dispatchDue(now);
      return { ...(await settleDue(db, ledger, rail, now)), sent };
    },
    payroll: (now, payrollOptions) =>
      runPayroll(db, ledger, now, { ...payrollOptions, payableDestinations: rail.destinations }),
  };
}

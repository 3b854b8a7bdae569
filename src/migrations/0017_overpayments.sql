-- Overpayments without recourse (docs/design/ledger.md, docs/integrators/overpayments.md).
--
-- Earnings corrections: a row may lower pay (a negative amount), or reverse an earlier row of its job, once. A
-- correction of a paid period lands on the job's current open paycheck, so its figures may go below zero; what was
-- made accessible may then stand above net pay (what advances took cannot be taken back from the balance).
ALTER TABLE earnings DROP CONSTRAINT earnings_amount_minor_check;
ALTER TABLE earnings ADD COLUMN reverses_earning_id uuid UNIQUE REFERENCES earnings (id);
ALTER TABLE paychecks DROP CONSTRAINT paychecks_gross_earnings_minor_check;
ALTER TABLE paychecks DROP CONSTRAINT paychecks_net_earnings_minor_check;
ALTER TABLE paychecks DROP CONSTRAINT paychecks_accessible_within_net;
-- What the payout of this paycheck gave back to earlier overpayments of its job (remittance reads it).
ALTER TABLE paychecks ADD COLUMN overpayment_recovered_minor bigint NOT NULL DEFAULT 0
  CHECK (overpayment_recovered_minor >= 0);

-- A paycheck that closed with advances above its net pay: the difference is owed back, only from later paychecks
-- of the same job, with no fee and no interest, or written off.
CREATE TABLE overpayments (
  id                     uuid PRIMARY KEY,
  person_id              uuid NOT NULL REFERENCES people (id),
  job_id                 uuid NOT NULL REFERENCES jobs (id),
  paycheck_id            uuid NOT NULL UNIQUE REFERENCES paychecks (id),
  organization_id        uuid NOT NULL REFERENCES organizations (id),
  currency               char(3) NOT NULL,
  amount_minor           bigint NOT NULL CHECK (amount_minor > 0),
  recovered_minor        bigint NOT NULL DEFAULT 0 CHECK (recovered_minor >= 0),
  written_off_minor      bigint NOT NULL DEFAULT 0 CHECK (written_off_minor >= 0),
  status                 text NOT NULL CHECK (status IN ('RESOLUTION_REQUIRED', 'RECOVERING', 'RECOVERED',
                           'WRITTEN_OFF')),
  resolution             text CHECK (resolution IN ('NEXT_PAYCHECK', 'INSTALLMENTS')),
  installments           integer CHECK (installments BETWEEN 1 AND 12),
  installments_left      integer CHECK (installments_left >= 0),
  resolved_by            text CHECK (resolved_by IN ('PERSON', 'EMPLOYER_POLICY', 'OPERATOR')),
  -- Paydays of the job since the overpayment was found: the write-off counts them.
  periods_seen           integer NOT NULL DEFAULT 0 CHECK (periods_seen >= 0),
  detected_at            timestamptz NOT NULL,
  resolved_at            timestamptz,
  closed_at              timestamptz,
  updated_at             timestamptz NOT NULL,
  CHECK (recovered_minor + written_off_minor <= amount_minor),
  CHECK (status <> 'RESOLUTION_REQUIRED' OR resolution IS NULL),
  CHECK (status <> 'RECOVERING' OR resolution IS NOT NULL),
  CHECK (status NOT IN ('RECOVERED', 'WRITTEN_OFF') OR closed_at IS NOT NULL)
);
CREATE INDEX overpayments_person_idx ON overpayments (person_id, detected_at);
CREATE INDEX overpayments_open_job_idx ON overpayments (job_id, detected_at)
  WHERE status IN ('RESOLUTION_REQUIRED', 'RECOVERING');
CREATE INDEX overpayments_list_idx ON overpayments (detected_at, id);

-- The person's worst open overpayment, kept in the transaction that changes one, so that an advance reads it with the
-- person (no extra statement for the people without one).
ALTER TABLE people ADD COLUMN overpayment_status text
  CHECK (overpayment_status IN ('RESOLUTION_REQUIRED', 'RECOVERING'));

-- The employer's policy for overpayments (docs/operators/overpayments.md).
ALTER TABLE organization_policies
  ADD COLUMN overpayment_default_resolution text NOT NULL DEFAULT 'NONE'
    CHECK (overpayment_default_resolution IN ('NONE', 'NEXT_PAYCHECK', 'INSTALLMENTS')),
  ADD COLUMN overpayment_installments integer NOT NULL DEFAULT 2 CHECK (overpayment_installments BETWEEN 1 AND 12),
  ADD COLUMN overpayment_write_off_after_periods integer NOT NULL DEFAULT 6
    CHECK (overpayment_write_off_after_periods BETWEEN 1 AND 52),
  ADD COLUMN overpayment_write_off_delinquent boolean NOT NULL DEFAULT false;

ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK (kind IN ('EARNINGS_BALANCE',
  'EMPLOYER_PAYROLL_CLEARING', 'PROVIDER_FUNDING', 'FEE_REVENUE', 'EXTERNAL_BANK', 'EXTERNAL_CARD',
  'PAYCHECK_CLEARING', 'RETURNS_PAYABLE', 'OVERPAYMENT_RECEIVABLE', 'OVERPAYMENT_WRITE_OFF'));
INSERT INTO ledger_accounts (id, kind, currency, organization_id)
  SELECT gen_random_uuid(), k.kind, a.currency, a.organization_id FROM ledger_accounts a
    CROSS JOIN (VALUES ('OVERPAYMENT_RECEIVABLE'), ('OVERPAYMENT_WRITE_OFF')) AS k(kind)
  WHERE a.kind = 'PROVIDER_FUNDING' AND a.account_id IS NULL AND a.paycheck_id IS NULL;

-- Who pays net pay on payday (docs/operators/employers.md, docs/operators/payroll-and-rails.md): PROVIDER, this
-- server, through the rail (every employer until now); or EMPLOYER, which runs payroll itself, pays its workers
-- directly and remits the deductions of the remittance report (src/reports/remittance-report.ts).
ALTER TABLE organization_policies
  ADD COLUMN payday_payout text NOT NULL DEFAULT 'PROVIDER' CHECK (payday_payout IN ('PROVIDER', 'EMPLOYER'));

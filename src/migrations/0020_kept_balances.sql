-- The balance of each ledger account owned by a person's account or a paycheck, kept in step with its entries by
-- the statement that writes them (src/ledger/posting.ts), so reading a balance does not grow with its history.
-- NULL means "not kept": the system's accounts (provider funding, fee revenue, external bank …) are shared by
-- every advance, and one row updated by each would make all advances wait for each other; their balances are
-- sums of their entries. A row that has a balance here has it updated by every posting that touches it.
ALTER TABLE ledger_accounts ADD COLUMN balance_minor bigint DEFAULT 0;

UPDATE ledger_accounts SET balance_minor = NULL WHERE account_id IS NULL AND paycheck_id IS NULL;

UPDATE ledger_accounts a SET balance_minor = s.balance
FROM (SELECT ledger_account_id,
    sum(CASE WHEN direction = 'CREDIT' THEN amount_minor ELSE -amount_minor END) AS balance
  FROM ledger_entries GROUP BY ledger_account_id) s
WHERE s.ledger_account_id = a.id AND a.balance_minor IS NOT NULL;

-- Webhook events show the kept balance (the trigger runs after the statement that wrote the entries and their
-- balances, so it sees both).
CREATE OR REPLACE FUNCTION webhook_account_data(a accounts) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('account', jsonb_build_object('id', a.id, 'person_id', a.person_id,
    'account_type', a.account_type, 'subtype', a.subtype, 'name', a.name,
    'verification_status', a.verification_status, 'currency', a.currency, 'details', a.details),
    'balance_minor', CASE WHEN a.account_type = 'EARNINGS_BALANCE' THEN coalesce((SELECT la.balance_minor
      FROM ledger_accounts la WHERE la.account_id = a.id), 0) END,
    -- The fee schedule its capabilities come from, as the accounts route reads it (findFeeSchedules).
    'fee_schedule', (SELECT jsonb_build_object('currency', trim(p.currency),
        'fee_card_instant_minor', p.fee_card_instant_minor, 'fee_card_next_day_minor', p.fee_card_next_day_minor,
        'fee_bank_instant_minor', p.fee_bank_instant_minor, 'fee_bank_next_day_minor', p.fee_bank_next_day_minor)
      FROM jobs j JOIN organization_policies p ON p.organization_id = j.organization_id
      WHERE j.person_id = a.person_id AND j.activation_status = 'ACTIVATED' ORDER BY j.created_at LIMIT 1))
$$;

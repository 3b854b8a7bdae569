-- An earnings balance event says whether its job is ACTIVATED, as the accounts routes read it (advance_origin in
-- readableAccounts, src/resources/accounts/store.ts): while it is not, an advance from the balance is refused, so
-- the delivery shows none of it available, as `GET` does.
CREATE OR REPLACE FUNCTION webhook_account_data(a accounts) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('account', jsonb_build_object('id', a.id, 'person_id', a.person_id,
    'account_type', a.account_type, 'subtype', a.subtype, 'name', a.name,
    'verification_status', a.verification_status, 'currency', a.currency, 'details', a.details),
    'balance_minor', CASE WHEN a.account_type = 'EARNINGS_BALANCE' THEN coalesce((SELECT la.balance_minor
      FROM ledger_accounts la WHERE la.account_id = a.id), 0) END,
    'advance_origin', CASE WHEN a.account_type = 'EARNINGS_BALANCE' THEN EXISTS (SELECT 1 FROM jobs j
      WHERE j.earnings_balance_account_id = a.id AND j.activation_status = 'ACTIVATED') END,
    'fee_schedule', (SELECT jsonb_build_object('currency', trim(p.currency),
        'fee_card_instant_minor', p.fee_card_instant_minor, 'fee_card_next_day_minor', p.fee_card_next_day_minor,
        'fee_bank_instant_minor', p.fee_bank_instant_minor, 'fee_bank_next_day_minor', p.fee_bank_next_day_minor,
        'time_zone', p.time_zone, 'state_of_residence', pe.state_of_residence,
        'rules_version', (SELECT s.value #>> '{}' FROM app_settings s WHERE s.key = 'compliance_rules_version'))
      FROM jobs j JOIN organization_policies p ON p.organization_id = j.organization_id
        JOIN people pe ON pe.id = j.person_id
      WHERE j.person_id = a.person_id AND j.activation_status = 'ACTIVATED' ORDER BY j.created_at LIMIT 1))
$$;

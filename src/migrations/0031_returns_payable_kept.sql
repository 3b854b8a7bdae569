-- RETURNS_PAYABLE keeps its balance on its row, as the accounts of people and paychecks do (0020): what is owed back
-- to workers is read by `ewa reports returns` and each page of GET /admin/reports/returns, and with no index of the
-- entries by account (0029) a sum of its entries would read them all. Only returns post to it, one statement each,
-- so the row is no queue for the advances, which is why the other system accounts keep none.
UPDATE ledger_accounts a SET balance_minor = coalesce(s.balance, 0)
FROM ledger_accounts r LEFT JOIN (SELECT e.ledger_account_id,
    sum(CASE WHEN e.direction = 'CREDIT' THEN e.amount_minor ELSE -e.amount_minor END) AS balance
  FROM ledger_entries e JOIN ledger_accounts k ON k.id = e.ledger_account_id AND k.kind = 'RETURNS_PAYABLE'
  GROUP BY e.ledger_account_id) s ON s.ledger_account_id = r.id
WHERE a.id = r.id AND r.kind = 'RETURNS_PAYABLE' AND r.account_id IS NULL AND r.paycheck_id IS NULL;

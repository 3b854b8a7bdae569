-- A payday payout that came back (an ACH return, or the rail's refusal: settlement's failPaycheckPayouts sets
-- payout_returned_at) told no one: the paycheck keeps its status, so no status_changed event went out, and a partner
-- showed the money in transit or deposited. Now the paychecks' update trigger also writes paycheck.payout_returned,
-- once, when payout_returned_at is first set, with the paycheck as it then was (its payout_return_reason among it).
CREATE OR REPLACE FUNCTION webhook_paychecks_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('paycheck.status_changed', 'paycheck.payout_returned') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), e.type, 'PERSON', 'paychecks', n.id, j.organization_id, n.person_id,
    n.updated_at, jsonb_build_object('paycheck', to_jsonb(n), 'previous_status', o.status)
  FROM after_rows n JOIN before_rows o ON o.id = n.id JOIN jobs j ON j.id = n.job_id
    CROSS JOIN LATERAL (VALUES
      (1, 'paycheck.status_changed', n.status IS DISTINCT FROM o.status),
      (2, 'paycheck.payout_returned', o.payout_returned_at IS NULL AND n.payout_returned_at IS NOT NULL)
    ) AS e(position, type, happened)
  WHERE e.happened AND webhook_wanted(e.type)
  ORDER BY n.updated_at, n.id, e.position;
  RETURN NULL;
END $$;

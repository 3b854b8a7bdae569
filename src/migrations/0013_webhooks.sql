-- Webhooks (src/webhooks/). Events are written by the triggers below, in the transaction of the change they tell
-- of: a change that rolls back leaves no event, and every path that changes a transfer, a paycheck, an account, a
-- job or an earnings balance tells of it, whichever module made the change. Each event is then fanned out to the
-- endpoints allowed to see it, as outbox rows (topic webhook.delivery) sent after commit like rail instructions.

-- A partner's URL, owned by one OAuth client: it receives the events of that client's organizations and of the
-- people who hold a job there.
CREATE TABLE webhook_endpoints (
  id              uuid PRIMARY KEY,
  client_id       text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  url             text NOT NULL CHECK (length(url) <= 2048),
  description     text CHECK (length(description) <= 200),
  -- The event types it receives; NULL for all of them.
  event_types     text[],
  status          text NOT NULL DEFAULT 'ENABLED' CHECK (status IN ('ENABLED', 'DISABLED')),
  disabled_reason text,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  CHECK ((status = 'DISABLED') = (disabled_reason IS NOT NULL))
);
CREATE INDEX webhook_endpoints_client_idx ON webhook_endpoints (client_id);

-- Signing secrets, sealed under a key derived from the master key. Each delivery is signed with every secret not
-- yet expired, so a receiver can move to a new secret while the old one still verifies.
CREATE TABLE webhook_secrets (
  id          uuid PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  sealed      bytea NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz
);
CREATE INDEX webhook_secrets_endpoint_idx ON webhook_secrets (endpoint_id);

-- What happened, with a snapshot of the resource as it was then (rendered as JSON:API when delivered). `seq`
-- orders the events of one resource as their transactions committed (each holds the resource's row).
CREATE TABLE webhook_events (
  id              uuid PRIMARY KEY,
  seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  type            text NOT NULL,
  -- Who may receive it: ORGANIZATION, the clients linked to its organization (what their client tokens read: jobs,
  -- earnings balances); PERSON, only clients the person has signed in to (or another app of the same partner) and
  -- not revoked (what only a user token reads: transfers, paychecks, bank accounts and cards), and linked to its
  -- organization or one of the person's.
  audience        text NOT NULL CHECK (audience IN ('ORGANIZATION', 'PERSON')),
  resource_type   text NOT NULL,
  resource_id     uuid NOT NULL,
  -- Who may see it: an organization's clients, or (no organization) the clients of the person's employers.
  organization_id uuid,
  person_id       uuid,
  occurred_at     timestamptz NOT NULL,
  data            jsonb NOT NULL
);
CREATE INDEX webhook_events_occurred_idx ON webhook_events (occurred_at);

-- Every attempt to deliver an event to an endpoint, with what the receiver answered and how long it took.
CREATE TABLE webhook_deliveries (
  id           uuid PRIMARY KEY,
  event_id     uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id  uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  duration_ms  integer NOT NULL,
  status_code  integer,
  outcome      text NOT NULL CHECK (outcome IN ('DELIVERED', 'FAILED', 'GIVEN_UP')),
  error        text
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, attempted_at);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

-- Deliveries are outbox rows. `sequence` is their event's seq: an endpoint gets a resource's events in order, each
-- only once the one before it left the outbox (subject_id names the endpoint and resource together).
ALTER TABLE outbox DROP CONSTRAINT outbox_topic_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_topic_check CHECK (topic IN ('rail.payment', 'webhook.delivery'));
ALTER TABLE outbox ADD COLUMN sequence bigint;
CREATE INDEX outbox_webhook_order_idx ON outbox (subject_id, sequence) WHERE topic = 'webhook.delivery';
-- Each topic has a dispatcher of its own (a slow receiver of webhooks must never hold up a payment), and each
-- claims through an index of its own topic only, so that a backlog of one is never scanned by the other.
DROP INDEX outbox_due_idx;
CREATE INDEX outbox_rail_due_idx ON outbox (due_at, id) WHERE topic = 'rail.payment';
CREATE INDEX outbox_webhook_due_idx ON outbox (due_at, sequence) WHERE topic = 'webhook.delivery';

-- The partner an OAuth client belongs to: a partner's apps (its mobile app's public client, its server's
-- confidential one) share what a worker allowed any of them. NULL: a client on its own.
ALTER TABLE oauth_clients ADD COLUMN partner text CHECK (length(partner) BETWEEN 1 AND 100);
UPDATE oauth_clients SET partner = 'demo-partner' WHERE client_id IN ('demo-partner-server', 'demo-partner-mobile');

-- A person's live grants to clients (oidc-provider's Grant rows), found by person and client.
CREATE INDEX oauth_payloads_grant_person_idx ON oauth_payloads ((payload->>'accountId'), (payload->>'clientId'))
  WHERE model = 'Grant';

-- Which enabled endpoint of a live client receives which event: its type is wanted, and the event is one a token of
-- that client could read (see audience above).
CREATE VIEW webhook_recipients AS
  SELECT e.id AS event_id, ep.id AS endpoint_id
  FROM webhook_events e
  JOIN webhook_endpoints ep ON ep.status = 'ENABLED' AND (ep.event_types IS NULL OR e.type = ANY (ep.event_types))
  JOIN oauth_clients c ON c.client_id = ep.client_id AND c.deleted_at IS NULL
  WHERE CASE WHEN e.organization_id IS NOT NULL THEN EXISTS (SELECT 1 FROM oauth_client_organizations l
      WHERE l.client_id = ep.client_id AND l.organization_id = e.organization_id)
    ELSE EXISTS (SELECT 1 FROM jobs j JOIN oauth_client_organizations l ON l.organization_id = j.organization_id
      WHERE j.person_id = e.person_id AND l.client_id = ep.client_id) END
  AND (e.audience = 'ORGANIZATION' OR EXISTS (SELECT 1 FROM oauth_payloads g
      JOIN oauth_clients granted ON granted.client_id = g.payload->>'clientId' AND granted.deleted_at IS NULL
        AND (granted.client_id = c.client_id OR granted.partner = c.partner)
      WHERE g.model = 'Grant' AND g.payload->>'accountId' = e.person_id::text
        AND (g.expires_at IS NULL OR g.expires_at > now())
        AND NOT EXISTS (SELECT 1 FROM oauth_revocations r WHERE r.kind = 'GRANT' AND r.value = g.id)));

-- Whether any enabled endpoint wants events of these types. Events are recorded for the endpoints that may receive
-- them: with none, a change pays one look at this (small) table instead of the snapshot and the insert.
CREATE FUNCTION webhook_wanted(VARIADIC event_types text[]) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints
    WHERE status = 'ENABLED' AND (webhook_endpoints.event_types IS NULL OR webhook_endpoints.event_types && $1))
$$;

-- Due at once, whatever clock the application keeps (a test's or the sandbox's may differ from the database's).
CREATE FUNCTION webhook_events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO outbox (id, topic, subject_id, payload, created_at, due_at, sequence)
  SELECT gen_random_uuid(), 'webhook.delivery', md5(r.endpoint_id::text || '/' || e.resource_id::text)::uuid,
    jsonb_build_object('eventId', e.id, 'endpointId', r.endpoint_id), e.occurred_at, '-infinity', e.seq
  FROM added e JOIN webhook_recipients r ON r.event_id = e.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_events_fan_out AFTER INSERT ON webhook_events REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_events_fan_out();

-- A transfer's snapshot: its row and its funding sources at that moment.
CREATE FUNCTION webhook_transfer_data(t transfers) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('transfer', to_jsonb(t), 'sources', coalesce((SELECT jsonb_agg(jsonb_build_object(
      'transfer_id', f.transfer_id, 'paycheck_id', f.paycheck_id, 'stage', f.stage, 'amount_minor', f.amount_minor,
      'currency', f.currency) ORDER BY f.stage, f.paycheck_id) FROM funding_sources f WHERE f.transfer_id = t.id), '[]'))
$$;

-- The organization a transfer's money comes from: the job of its earnings balance, or of the paycheck it pays out.
CREATE FUNCTION webhook_transfer_organization(t transfers) RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT j.organization_id FROM jobs j WHERE j.earnings_balance_account_id = t.origin_account_id LIMIT 1),
    (SELECT j.organization_id FROM paychecks p JOIN jobs j ON j.id = p.job_id WHERE p.id = t.origin_paycheck_id))
$$;

CREATE FUNCTION webhook_transfers_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('transfer.created') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), 'transfer.created', 'PERSON', 'transfers', t.id, webhook_transfer_organization(t), t.person_id,
    t.submitted_at, webhook_transfer_data(t)
  FROM added t ORDER BY t.submitted_at, t.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_transfers_created AFTER INSERT ON transfers REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_transfers_created();

CREATE FUNCTION webhook_transfers_resolved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('transfer.settled', 'transfer.failed') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), CASE n.status WHEN 'SETTLED' THEN 'transfer.settled' ELSE 'transfer.failed' END,
    'PERSON', 'transfers', n.id, webhook_transfer_organization(n), n.person_id, coalesce(n.resolved_at, n.submitted_at),
    webhook_transfer_data(n)
  FROM after_rows n JOIN before_rows o ON o.id = n.id
  WHERE n.status IS DISTINCT FROM o.status AND n.status IN ('SETTLED', 'FAILED')
  ORDER BY n.resolved_at, n.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_transfers_resolved AFTER UPDATE ON transfers
  REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_transfers_resolved();

CREATE FUNCTION webhook_paychecks_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('paycheck.status_changed') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), 'paycheck.status_changed', 'PERSON', 'paychecks', n.id, j.organization_id, n.person_id,
    n.updated_at, jsonb_build_object('paycheck', to_jsonb(n), 'previous_status', o.status)
  FROM after_rows n JOIN before_rows o ON o.id = n.id JOIN jobs j ON j.id = n.job_id
  WHERE n.status IS DISTINCT FROM o.status
  ORDER BY n.updated_at, n.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_paychecks_status_changed AFTER UPDATE ON paychecks
  REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_paychecks_status_changed();

-- What an account's event shows: the columns its resource is made of, never its secrets (numbers, fingerprints).
CREATE FUNCTION webhook_account_data(a accounts) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('account', jsonb_build_object('id', a.id, 'person_id', a.person_id,
    'account_type', a.account_type, 'subtype', a.subtype, 'name', a.name,
    'verification_status', a.verification_status, 'currency', a.currency, 'details', a.details),
    'balance_minor', CASE WHEN a.account_type = 'EARNINGS_BALANCE' THEN (SELECT coalesce(sum(CASE
      WHEN le.direction = 'CREDIT' THEN le.amount_minor ELSE -le.amount_minor END), 0)
      FROM ledger_accounts la JOIN ledger_entries le ON le.ledger_account_id = la.id WHERE la.account_id = a.id) END,
    -- The fee schedule its capabilities come from, as the accounts route reads it (findFeeSchedules).
    'fee_schedule', (SELECT jsonb_build_object('currency', trim(p.currency),
        'fee_card_instant_minor', p.fee_card_instant_minor, 'fee_card_next_day_minor', p.fee_card_next_day_minor,
        'fee_bank_instant_minor', p.fee_bank_instant_minor, 'fee_bank_next_day_minor', p.fee_bank_next_day_minor)
      FROM jobs j JOIN organization_policies p ON p.organization_id = j.organization_id
      WHERE j.person_id = a.person_id AND j.activation_status = 'ACTIVATED' ORDER BY j.created_at LIMIT 1))
$$;

CREATE FUNCTION webhook_accounts_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('account.created') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), 'account.created', 'PERSON', 'accounts', a.id, NULL, a.person_id, a.created_at,
    webhook_account_data(a)
  FROM added a ORDER BY a.created_at, a.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_accounts_created AFTER INSERT ON accounts REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_accounts_created();

CREATE FUNCTION webhook_accounts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('account.deleted') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), 'account.deleted', 'PERSON', 'accounts', n.id, NULL, n.person_id, n.deleted_at,
    webhook_account_data(n)
  FROM after_rows n JOIN before_rows o ON o.id = n.id
  WHERE o.deleted_at IS NULL AND n.deleted_at IS NOT NULL
  ORDER BY n.deleted_at, n.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_accounts_deleted AFTER UPDATE ON accounts
  REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_accounts_deleted();

CREATE FUNCTION webhook_jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('job.updated') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), 'job.updated', 'ORGANIZATION', 'jobs', n.id, n.organization_id, n.person_id, n.updated_at,
    jsonb_build_object('job', to_jsonb(n))
  FROM after_rows n JOIN before_rows o ON o.id = n.id
  WHERE to_jsonb(n) - 'updated_at' IS DISTINCT FROM to_jsonb(o) - 'updated_at'
  ORDER BY n.updated_at, n.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_jobs_updated AFTER UPDATE ON jobs
  REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_jobs_updated();

-- An earnings balance changes only by ledger entries: one event per balance an insert of entries touched, with
-- the balance after it.
CREATE FUNCTION webhook_earnings_balances_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT webhook_wanted('earnings_balance.updated') THEN RETURN NULL; END IF;
  INSERT INTO webhook_events (id, type, audience, resource_type, resource_id, organization_id, person_id, occurred_at, data)
  SELECT gen_random_uuid(), 'earnings_balance.updated', 'ORGANIZATION', 'accounts', a.id,
    (SELECT j.organization_id FROM jobs j WHERE j.earnings_balance_account_id = a.id LIMIT 1), a.person_id,
    touched.posted_at, webhook_account_data(a)
  FROM (SELECT la.account_id, max(p.posted_at) AS posted_at
      FROM added le JOIN ledger_accounts la ON la.id = le.ledger_account_id
      JOIN ledger_postings p ON p.id = le.posting_id
      WHERE la.kind = 'EARNINGS_BALANCE' AND la.account_id IS NOT NULL
      GROUP BY la.account_id) touched
    JOIN accounts a ON a.id = touched.account_id
  ORDER BY touched.posted_at, a.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_earnings_balances_updated AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_earnings_balances_updated();

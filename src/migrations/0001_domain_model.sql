-- The whole domain model of DESIGN §4. Money columns are bigint minor units beside a currency code.
-- Later migrations add columns; this one is never edited once released.

CREATE TABLE app_settings (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organizations (
  id         uuid PRIMARY KEY,
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  products   text[] NOT NULL DEFAULT '{ODP}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- The published description lists two card-program products as well; this server does not offer them.
  CHECK (products <@ ARRAY['ODP']::text[])
);
CREATE INDEX organizations_name_idx ON organizations (name);

-- One policy row per organization; every default is DESIGN §4's. Rates are basis points (5000 = 50 %).
CREATE TABLE organization_policies (
  organization_id               uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  currency                      char(3) NOT NULL DEFAULT 'USD',
  time_zone                     text NOT NULL DEFAULT 'America/New_York',
  pay_frequency                 text NOT NULL DEFAULT 'BIWEEKLY'
    CHECK (pay_frequency IN ('WEEKLY', 'BIWEEKLY', 'TWICE_MONTHLY', 'MONTHLY')),
  pay_calendar_anchor           date NOT NULL DEFAULT '2026-01-05',
  payday_offset_days            integer NOT NULL DEFAULT 5 CHECK (payday_offset_days BETWEEN 0 AND 31),
  access_rate_bp                integer NOT NULL DEFAULT 5000 CHECK (access_rate_bp BETWEEN 0 AND 10000),
  withholding_estimate_bp       integer NOT NULL DEFAULT 2500 CHECK (withholding_estimate_bp BETWEEN 0 AND 10000),
  transfers_enabled             boolean NOT NULL DEFAULT true,
  minimum_transfer_minor        bigint NOT NULL DEFAULT 500 CHECK (minimum_transfer_minor >= 0),
  maximum_transfer_minor        bigint NOT NULL DEFAULT 100000 CHECK (maximum_transfer_minor >= 0),
  maximum_fee_minor             bigint NOT NULL DEFAULT 999 CHECK (maximum_fee_minor >= 0),
  daily_transfer_count_max      integer NOT NULL DEFAULT 5 CHECK (daily_transfer_count_max >= 0),
  daily_transfer_amount_max_minor bigint NOT NULL DEFAULT 100000 CHECK (daily_transfer_amount_max_minor >= 0),
  -- NULL means the destination and schedule pair is not offered.
  fee_card_instant_minor        bigint DEFAULT 299 CHECK (fee_card_instant_minor >= 0),
  fee_card_next_day_minor       bigint DEFAULT 0 CHECK (fee_card_next_day_minor >= 0),
  fee_bank_instant_minor        bigint CHECK (fee_bank_instant_minor >= 0),
  fee_bank_next_day_minor       bigint DEFAULT 0 CHECK (fee_bank_next_day_minor >= 0),
  updated_at                    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE people (
  id                     uuid PRIMARY KEY,
  email                  text UNIQUE CHECK (email = lower(email)),
  password_hash          text,
  first_name             text NOT NULL,
  last_name              text NOT NULL,
  state_of_residence     char(2),
  disallow_reason        text CHECK (disallow_reason IN ('INACTIVE', 'DELINQUENT', 'BANNED')),
  card_product_eligible  boolean NOT NULL DEFAULT false,
  card_product_enrolled  boolean NOT NULL DEFAULT false,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE accounts (
  id                   uuid PRIMARY KEY,
  person_id            uuid NOT NULL REFERENCES people (id),
  account_type         text NOT NULL CHECK (account_type IN ('EARNINGS_BALANCE', 'DEPOSITORY', 'CARD')),
  -- Card accounts are DEBIT cards; the published description's card-program subtype is not offered here.
  subtype              text NOT NULL CHECK (subtype IN ('ODP', 'CHECKING', 'SAVINGS', 'DEBIT')),
  name                 text NOT NULL,
  verification_status  text NOT NULL DEFAULT 'VERIFIED'
    CHECK (verification_status IN ('VERIFICATION_PENDING', 'VERIFICATION_FAILED', 'VERIFIED')),
  currency             char(3) NOT NULL DEFAULT 'USD',
  -- Only what may be shown: names, last four digits, issuer, expiry. Secrets live in the columns below.
  details              jsonb NOT NULL DEFAULT '{}',
  routing_number       text,
  account_number_enc   bytea,
  number_fingerprint   text,
  vault_card_id        uuid,
  deleted_at           timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  CHECK ((account_type = 'EARNINGS_BALANCE') = (subtype = 'ODP')),
  CHECK (account_type <> 'DEPOSITORY' OR subtype IN ('CHECKING', 'SAVINGS')),
  CHECK (account_type <> 'CARD' OR subtype = 'DEBIT')
);
CREATE INDEX accounts_person_idx ON accounts (person_id) WHERE deleted_at IS NULL;
CREATE INDEX accounts_fingerprint_idx ON accounts (person_id, number_fingerprint) WHERE deleted_at IS NULL;

CREATE TABLE jobs (
  id                                    uuid PRIMARY KEY,
  person_id                             uuid NOT NULL REFERENCES people (id),
  organization_id                       uuid NOT NULL REFERENCES organizations (id),
  external_primary_identifier           text NOT NULL,
  external_employee_id                  text,
  external_group                        text,
  first_name                            text NOT NULL,
  last_name                             text NOT NULL,
  location                              text,
  title                                 text,
  department                            text,
  activation_status                     text NOT NULL DEFAULT 'ACTIVATED' CHECK (activation_status IN
    ('DEACTIVATED', 'DEACTIVATION_PENDING', 'ACTIVATION_REQUIRED', 'ACTIVATION_UNDER_REVIEW', 'ACTIVATED')),
  wage_rate_minor                       bigint NOT NULL CHECK (wage_rate_minor >= 0),
  wage_currency                         char(3) NOT NULL DEFAULT 'USD',
  wage_frequency                        text NOT NULL CHECK (wage_frequency IN
    ('HOURLY', 'WEEKLY', 'BIWEEKLY', 'TWICE_MONTHLY', 'MONTHLY', 'ANNUALLY')),
  direct_deposit_status                 text NOT NULL DEFAULT 'SETUP_REQUIRED'
    CHECK (direct_deposit_status IN ('SETUP_REQUIRED', 'SETUP_PENDING', 'SETUP_COMPLETE')),
  direct_deposit_default_depository_id  uuid REFERENCES accounts (id),
  direct_deposit_default_card_id        uuid REFERENCES accounts (id),
  earnings_balance_account_id           uuid REFERENCES accounts (id),
  created_at                            timestamptz NOT NULL DEFAULT now(),
  updated_at                            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, external_primary_identifier)
);
CREATE INDEX jobs_person_idx ON jobs (person_id);
CREATE INDEX jobs_employee_id_idx ON jobs (organization_id, external_employee_id);

CREATE TABLE paychecks (
  id                            uuid PRIMARY KEY,
  job_id                        uuid NOT NULL REFERENCES jobs (id),
  person_id                     uuid NOT NULL REFERENCES people (id),
  status                        text NOT NULL DEFAULT 'ESTIMATED'
    CHECK (status IN ('ESTIMATED', 'PROCESSING', 'IN_TRANSIT', 'DEPOSITED')),
  pay_period_starts_at          timestamptz NOT NULL,
  pay_period_ends_at            timestamptz NOT NULL,
  deposit_expected_at           timestamptz NOT NULL,
  currency                      char(3) NOT NULL DEFAULT 'USD',
  gross_earnings_minor          bigint NOT NULL DEFAULT 0 CHECK (gross_earnings_minor >= 0),
  employer_withholdings_minor   bigint NOT NULL DEFAULT 0 CHECK (employer_withholdings_minor >= 0),
  net_earnings_minor            bigint NOT NULL DEFAULT 0 CHECK (net_earnings_minor >= 0),
  total_debited_minor           bigint NOT NULL DEFAULT 0 CHECK (total_debited_minor >= 0),
  created_at                    timestamptz NOT NULL DEFAULT now(),
  updated_at                    timestamptz NOT NULL DEFAULT now(),
  CHECK (pay_period_starts_at < pay_period_ends_at),
  UNIQUE (job_id, pay_period_starts_at)
);
CREATE INDEX paychecks_person_idx ON paychecks (person_id, pay_period_starts_at);
CREATE INDEX paychecks_open_idx ON paychecks (status, pay_period_ends_at) WHERE status <> 'DEPOSITED';

-- Shifts and salary accrual posted by employers; external_id makes an import idempotent per row.
CREATE TABLE earnings (
  id              uuid PRIMARY KEY,
  job_id          uuid NOT NULL REFERENCES jobs (id),
  paycheck_id     uuid NOT NULL REFERENCES paychecks (id),
  external_id     text NOT NULL,
  worked_on       date NOT NULL,
  hours_hundredths integer CHECK (hours_hundredths >= 0),
  amount_minor    bigint NOT NULL CHECK (amount_minor >= 0),
  currency        char(3) NOT NULL DEFAULT 'USD',
  source          text NOT NULL CHECK (source IN ('SHIFT', 'SALARY', 'ADJUSTMENT')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (job_id, external_id)
);
CREATE INDEX earnings_paycheck_idx ON earnings (paycheck_id);

CREATE TABLE transfers (
  id                      uuid PRIMARY KEY,
  person_id               uuid NOT NULL REFERENCES people (id),
  origin_account_id       uuid REFERENCES accounts (id),
  origin_paycheck_id      uuid REFERENCES paychecks (id),
  destination_account_id  uuid REFERENCES accounts (id),
  amount_minor            bigint NOT NULL CHECK (amount_minor > 0),
  fee_minor               bigint NOT NULL DEFAULT 0 CHECK (fee_minor >= 0 AND fee_minor <= amount_minor),
  currency                char(3) NOT NULL,
  schedule                text NOT NULL CHECK (schedule IN ('WITHIN_THIRTY_MINUTES', 'NEXT_BUSINESS_DAY')),
  status                  text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SETTLED', 'FAILED')),
  failure_reason          text,
  rail_reference          text,
  settle_after            timestamptz,
  submitted_at            timestamptz NOT NULL,
  resolved_at             timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  CHECK ((origin_account_id IS NULL) <> (origin_paycheck_id IS NULL)),
  CHECK ((status = 'PENDING') = (resolved_at IS NULL))
);
CREATE INDEX transfers_person_idx ON transfers (person_id, submitted_at);
CREATE INDEX transfers_pending_idx ON transfers (settle_after) WHERE status = 'PENDING';

-- Which paychecks fund a transfer: estimated when it is submitted, final when it resolves.
CREATE TABLE funding_sources (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transfer_id   uuid NOT NULL REFERENCES transfers (id),
  paycheck_id   uuid NOT NULL REFERENCES paychecks (id),
  stage         text NOT NULL CHECK (stage IN ('ESTIMATED', 'FINAL')),
  amount_minor  bigint NOT NULL CHECK (amount_minor > 0),
  currency      char(3) NOT NULL
);
CREATE INDEX funding_sources_transfer_idx ON funding_sources (transfer_id, stage);
CREATE INDEX funding_sources_paycheck_idx ON funding_sources (paycheck_id);

-- Double-entry ledger. Ledger accounts are both the people's accounts and the system's.
CREATE TABLE ledger_accounts (
  id               uuid PRIMARY KEY,
  kind             text NOT NULL CHECK (kind IN ('EARNINGS_BALANCE', 'EMPLOYER_PAYROLL_CLEARING', 'PROVIDER_FUNDING',
                     'FEE_REVENUE', 'EXTERNAL_BANK', 'EXTERNAL_CARD', 'PAYCHECK_CLEARING')),
  currency         char(3) NOT NULL,
  account_id       uuid UNIQUE REFERENCES accounts (id),
  organization_id  uuid REFERENCES organizations (id),
  paycheck_id      uuid UNIQUE REFERENCES paychecks (id),
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX ledger_accounts_system_idx ON ledger_accounts (kind, currency, organization_id)
  WHERE account_id IS NULL AND paycheck_id IS NULL;

CREATE TABLE ledger_postings (
  id           uuid PRIMARY KEY,
  kind         text NOT NULL,
  transfer_id  uuid REFERENCES transfers (id),
  paycheck_id  uuid REFERENCES paychecks (id),
  posted_at    timestamptz NOT NULL,
  memo         text
);
CREATE INDEX ledger_postings_transfer_idx ON ledger_postings (transfer_id);

CREATE TABLE ledger_entries (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  posting_id         uuid NOT NULL REFERENCES ledger_postings (id),
  ledger_account_id  uuid NOT NULL REFERENCES ledger_accounts (id),
  direction          text NOT NULL CHECK (direction IN ('DEBIT', 'CREDIT')),
  amount_minor       bigint NOT NULL CHECK (amount_minor > 0),
  currency           char(3) NOT NULL
);
CREATE INDEX ledger_entries_account_idx ON ledger_entries (ledger_account_id);
CREATE INDEX ledger_entries_posting_idx ON ledger_entries (posting_id);

-- Entries are append-only: a correction is a new posting, never an edit.
CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only (% refused)', TG_OP;
END;
$$;
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();

-- POST /rest/transfers replays: the response of the first request with a key is kept for its lifetime.
CREATE TABLE idempotency_keys (
  scope             text NOT NULL,
  key               text NOT NULL,
  request_hash      text NOT NULL,
  state             text NOT NULL CHECK (state IN ('IN_FLIGHT', 'COMPLETE')),
  response_status   integer,
  response_headers  jsonb,
  response_body     text,
  locked_until      timestamptz NOT NULL,
  created_at        timestamptz NOT NULL,
  expires_at        timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);

-- OAuth: registered clients, the organizations they may see, the provider's artifacts, and signing keys.
CREATE TABLE oauth_clients (
  client_id     text PRIMARY KEY,
  name          text NOT NULL,
  secret_hash   text,
  is_public     boolean NOT NULL,
  redirect_uris text[] NOT NULL DEFAULT '{}',
  scopes        text[] NOT NULL DEFAULT '{}',
  logo_uri      text,
  policy_uri    text,
  tos_uri       text,
  jwks_uri      text,
  jwks          jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  deleted_at    timestamptz
);

CREATE TABLE oauth_client_organizations (
  client_id        text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  PRIMARY KEY (client_id, organization_id)
);

CREATE TABLE oauth_payloads (
  model        text NOT NULL,
  id           text NOT NULL,
  payload      jsonb NOT NULL,
  grant_id     text,
  user_code    text,
  uid          text,
  expires_at   timestamptz,
  consumed_at  timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX oauth_payloads_grant_idx ON oauth_payloads (grant_id);
CREATE INDEX oauth_payloads_uid_idx ON oauth_payloads (uid);
CREATE INDEX oauth_payloads_expiry_idx ON oauth_payloads (expires_at);

CREATE TABLE signing_keys (
  kid              text PRIMARY KEY,
  purpose          text NOT NULL CHECK (purpose IN ('OAUTH_SIGNING', 'CARD_TOKEN', 'VAULT')),
  alg              text NOT NULL,
  private_key_enc  bytea NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  retired_at       timestamptz
);

-- Card vault: the only place a PAN is kept, encrypted under a key named by key_id.
CREATE TABLE card_vault (
  id                 uuid PRIMARY KEY,
  fingerprint        text NOT NULL,
  pan_enc            bytea NOT NULL,
  key_id             text NOT NULL,
  bin                text NOT NULL,
  last_four          char(4) NOT NULL,
  expiration_month   smallint NOT NULL CHECK (expiration_month BETWEEN 1 AND 12),
  expiration_year    smallint NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_vault_fingerprint_idx ON card_vault (fingerprint);
CREATE INDEX card_vault_key_idx ON card_vault (key_id);

CREATE TABLE card_token_uses (
  token_id  text PRIMARY KEY,
  used_at   timestamptz NOT NULL
);

-- Scheduled work: one row per job and run key, so that N processes run it once.
CREATE TABLE scheduled_runs (
  job_name     text NOT NULL,
  run_key      text NOT NULL,
  state        text NOT NULL CHECK (state IN ('RUNNING', 'DONE', 'FAILED')),
  started_at   timestamptz NOT NULL,
  finished_at  timestamptz,
  detail       jsonb,
  PRIMARY KEY (job_name, run_key)
);

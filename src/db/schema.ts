import type { ColumnType, Generated } from 'kysely';

/** Row types of the tables in src/migrations, as Kysely sees them. Money columns end in `_minor`. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type RequiredTimestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T = unknown> = ColumnType<T, string | T, string | T>;
type DateOnly = ColumnType<string, string, string>;

export interface AppSettingsTable {
  key: string;
  value: Json;
  updated_at: Timestamp;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  products: ColumnType<string[], string[] | undefined, string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OrganizationPoliciesTable {
  organization_id: string;
  currency: Generated<string>;
  time_zone: Generated<string>;
  pay_frequency: Generated<string>;
  pay_calendar_anchor: ColumnType<string, string | undefined, string>;
  payday_offset_days: Generated<number>;
  access_rate_bp: Generated<number>;
  withholding_estimate_bp: Generated<number>;
  transfers_enabled: Generated<boolean>;
  minimum_transfer_minor: Generated<number>;
  maximum_transfer_minor: Generated<number>;
  maximum_fee_minor: Generated<number>;
  daily_transfer_count_max: Generated<number>;
  daily_transfer_amount_max_minor: Generated<number>;
  fee_card_instant_minor: ColumnType<number | null, number | null | undefined, number | null>;
  fee_card_next_day_minor: ColumnType<number | null, number | null | undefined, number | null>;
  fee_bank_instant_minor: ColumnType<number | null, number | null | undefined, number | null>;
  fee_bank_next_day_minor: ColumnType<number | null, number | null | undefined, number | null>;
  overpayment_default_resolution: Generated<string>;
  overpayment_installments: Generated<number>;
  overpayment_write_off_after_periods: Generated<number>;
  overpayment_write_off_delinquent: Generated<boolean>;
  payday_payout: Generated<string>;
  updated_at: Timestamp;
}

export interface PeopleTable {
  id: string;
  email: string | null;
  password_hash: string | null;
  first_name: string;
  last_name: string;
  state_of_residence: string | null;
  state_of_residence_source: ColumnType<string | null, string | null | undefined, string | null>;
  disallow_reason: string | null;
  overpayment_status: ColumnType<string | null, string | null | undefined, string | null>;
  card_product_eligible: Generated<boolean>;
  card_product_enrolled: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccountsTable {
  id: string;
  person_id: string;
  account_type: string;
  subtype: string;
  name: string;
  verification_status: Generated<string>;
  currency: Generated<string>;
  details: Json<Record<string, unknown>>;
  routing_number: string | null;
  account_number_enc: Uint8Array | null;
  number_fingerprint: string | null;
  vault_card_id: string | null;
  deleted_at: Date | null;
  created_at: Timestamp;
}

export interface JobsTable {
  id: string;
  person_id: string;
  organization_id: string;
  external_primary_identifier: string;
  external_employee_id: string | null;
  external_group: string | null;
  first_name: string;
  last_name: string;
  location: string | null;
  title: string | null;
  department: string | null;
  activation_status: Generated<string>;
  wage_rate_minor: number;
  wage_currency: Generated<string>;
  wage_frequency: string;
  direct_deposit_status: Generated<string>;
  direct_deposit_default_depository_id: string | null;
  direct_deposit_default_card_id: string | null;
  earnings_balance_account_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PaychecksTable {
  id: string;
  job_id: string;
  person_id: string;
  status: Generated<string>;
  pay_period_starts_at: RequiredTimestamp;
  pay_period_ends_at: RequiredTimestamp;
  deposit_expected_at: RequiredTimestamp;
  currency: Generated<string>;
  gross_earnings_minor: Generated<number>;
  employer_withholdings_minor: Generated<number>;
  net_earnings_minor: Generated<number>;
  total_debited_minor: Generated<number>;
  accessible_minor: Generated<number>;
  payout_account_id: string | null;
  payout_minor: number | null;
  payout_rail_reference: string | null;
  payout_settle_after: Date | null;
  payout_rail_accepted_at: Timestamp | null;
  payout_held_reason: string | null;
  payout_returned_at: Date | null;
  payout_return_reason: string | null;
  deposited_at: Date | null;
  overpayment_recovered_minor: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EarningsTable {
  id: string;
  job_id: string;
  paycheck_id: string;
  external_id: string;
  worked_on: DateOnly;
  hours_hundredths: number | null;
  amount_minor: number;
  currency: Generated<string>;
  source: string;
  reverses_earning_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

export interface TransfersTable {
  id: string;
  person_id: string;
  origin_account_id: string | null;
  origin_paycheck_id: string | null;
  destination_account_id: string | null;
  amount_minor: number;
  fee_minor: Generated<number>;
  currency: string;
  schedule: string;
  status: Generated<string>;
  failure_reason: string | null;
  rail_reference: string | null;
  settle_after: Date | null;
  rail_accepted_at: Timestamp | null;
  submitted_at: RequiredTimestamp;
  resolved_at: Date | null;
  returned_at: Date | null;
  returned_to: 'EARNINGS_BALANCE' | 'RETURNS_PAYABLE' | null;
  created_at: Timestamp;
}

export interface FundingSourcesTable {
  id: Generated<number>;
  transfer_id: string;
  paycheck_id: string;
  stage: 'ESTIMATED' | 'FINAL';
  amount_minor: number;
  currency: string;
}

export interface LedgerAccountsTable {
  id: string;
  kind: string;
  currency: string;
  account_id: string | null;
  organization_id: string | null;
  paycheck_id: string | null;
  /** Kept in step with the entries for people's and paychecks' accounts; null (not kept) for the system's. */
  balance_minor: Generated<number | null>;
  created_at: Timestamp;
}

export interface LedgerPostingsTable {
  id: string;
  kind: string;
  transfer_id: string | null;
  paycheck_id: string | null;
  posted_at: RequiredTimestamp;
  memo: string | null;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  posting_id: string;
  ledger_account_id: string;
  direction: 'DEBIT' | 'CREDIT';
  amount_minor: number;
  currency: string;
}

export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_headers: Json<Record<string, string>> | null;
  response_body: string;
  created_at: RequiredTimestamp;
  expires_at: RequiredTimestamp;
}

export interface OauthClientsTable {
  client_id: string;
  name: string;
  secret_hash: string | null;
  is_public: boolean;
  redirect_uris: ColumnType<string[], string[] | undefined, string[]>;
  scopes: ColumnType<string[], string[] | undefined, string[]>;
  logo_uri: string | null;
  policy_uri: string | null;
  tos_uri: string | null;
  jwks_uri: string | null;
  jwks: Json | null;
  auth_method: Generated<string>;
  created_at: Timestamp;
  deleted_at: Date | null;
  partner: string | null;
}

export interface OauthClientOrganizationsTable {
  client_id: string;
  organization_id: string;
}

export interface OauthPayloadsTable {
  model: string;
  id: string;
  payload: Json<Record<string, unknown>>;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: Date | null;
  consumed_at: Date | null;
}

export interface SigningKeysTable {
  kid: string;
  purpose: string;
  alg: string;
  private_key_enc: Uint8Array;
  created_at: Timestamp;
  retired_at: Date | null;
}

export interface CardVaultTable {
  id: string;
  fingerprint: string;
  pan_enc: Uint8Array;
  key_id: string;
  bin: string;
  last_four: string;
  expiration_month: number;
  expiration_year: number;
  created_at: Timestamp;
}

export interface CardTokenUsesTable {
  token_id: string;
  used_at: RequiredTimestamp;
  expires_at: RequiredTimestamp;
}

export interface ScheduledRunsTable {
  job_name: string;
  run_key: string;
  state: 'RUNNING' | 'DONE' | 'FAILED';
  started_at: RequiredTimestamp;
  finished_at: Date | null;
  detail: Json | null;
}

export interface OauthRevocationsTable {
  kind: 'TOKEN' | 'GRANT' | 'CLIENT';
  value: string;
  revoked_at: Timestamp;
  expires_at: RequiredTimestamp;
}

export interface LoginThrottleTable {
  key: string;
  failures: Generated<number>;
  locked_until: Date | null;
  updated_at: Timestamp;
}

export interface OutboxTable {
  id: string;
  topic: string;
  subject_id: string;
  payload: Json<Record<string, unknown>>;
  created_at: RequiredTimestamp;
  due_at: RequiredTimestamp;
  attempts: Generated<number>;
  leased_until: Date | null;
  last_error: string | null;
  /** A webhook delivery's event seq: the order an endpoint gets one resource's events in. */
  sequence: number | null;
}

export interface AchWindowsTable {
  id: string;
  cutoff_at: RequiredTimestamp;
  cut_at: Date | null;
}

export interface AchEntriesTable {
  instruction_id: string;
  reference: string;
  purpose: 'ADVANCE' | 'PAYCHECK';
  window_id: string;
  trace_number: string;
  effective_date: DateOnly;
  settles_at: RequiredTimestamp;
  destination_account_id: string;
  amount_minor: number;
  created_at: RequiredTimestamp;
}

export interface AchFilesTable {
  window_id: string;
  file_name: string;
  /** Files composed before 0012 only; later ones are in content_sealed. */
  content: string | null;
  content_sealed: Uint8Array | null;
  entry_count: number;
  total_credit_minor: number;
  entry_hash: string;
  created_at: RequiredTimestamp;
  written_at: Date | null;
}

export interface AchReturnFilesTable {
  sha256: string;
  file_name: string;
  read_at: RequiredTimestamp;
  returns: number;
  unmatched: number;
  error: string | null;
}

/** What a name of the ACH inbound folder gave when its bytes were claimed, to skip it unchanged (0037). */
export interface AchInboundFilesTable {
  file_name: string;
  sha256: string;
  size_bytes: string;
  mtime_ns: string;
  ctime_ns: string;
  device: string;
  inode: string;
  seen_at: RequiredTimestamp;
}

/** A return that matched no entry of ours, or not its amount (0032): nothing applied, kept for a person. */
export interface AchUnmatchedReturnsTable {
  file_sha256: string;
  /** Its place among its file's returns, from 1. */
  position: number;
  original_trace_number: string;
  amount_minor: number;
  return_code: string;
  transaction_code: number;
  individual_id: string;
  addenda_information: string;
  received_at: RequiredTimestamp;
}

/** A notification of change (0033): kept with the entry it is about, never applied. */
export interface AchChangeNotificationsTable {
  file_sha256: string;
  /** Its place among its file's notifications of change, from 1. */
  position: number;
  original_trace_number: string;
  change_code: string;
  corrected_data: string;
  transaction_code: number;
  individual_id: string;
  original_receiving_dfi: string;
  /** The entry it is about; null when it names none of ours. */
  instruction_id: string | null;
  received_at: RequiredTimestamp;
}

export interface AchReturnsTable {
  /** The entry returned (0026): trace numbers are given again, so they name no entry alone. */
  instruction_id: string;
  /** The original trace number the return named. */
  trace_number: string;
  return_code: string;
  file_sha256: string;
  received_at: RequiredTimestamp;
}

export interface SchemaMigrationsTable {
  name: string;
  checksum: string;
  applied_at: Timestamp;
}

export interface WebhookEndpointsTable {
  id: string;
  client_id: string;
  url: string;
  description: string | null;
  event_types: string[] | null;
  status: Generated<string>;
  disabled_reason: string | null;
  created_at: RequiredTimestamp;
  updated_at: RequiredTimestamp;
}

export interface WebhookSecretsTable {
  id: string;
  endpoint_id: string;
  sealed: Buffer;
  created_at: RequiredTimestamp;
  expires_at: Date | string | null;
}

export interface WebhookEventsTable {
  id: string;
  seq: Generated<string>;
  type: string;
  audience: string;
  resource_type: string;
  resource_id: string;
  organization_id: string | null;
  person_id: string | null;
  occurred_at: RequiredTimestamp;
  data: Json<Record<string, unknown>>;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempt: number;
  attempted_at: RequiredTimestamp;
  duration_ms: number;
  status_code: number | null;
  outcome: string;
  error: string | null;
}

export interface ComplianceRuleOverridesTable {
  rule_id: string;
  rule: ColumnType<unknown, string | null, string | null>;
  disabled: Generated<boolean>;
  changed_by: string;
  changed_at: Timestamp;
}

export interface DisclosureDocumentsTable {
  id: string;
  state: string | null;
  product: Generated<string>;
  version: number;
  title: string;
  body: string;
  effective_from: RequiredTimestamp;
  published_at: RequiredTimestamp;
}

export interface DisclosureAcceptancesTable {
  id: string;
  person_id: string;
  document_id: string;
  version: number;
  client_id: string | null;
  ip_address: string | null;
  accepted_at: RequiredTimestamp;
}

export interface TransferDisclosuresTable {
  transfer_id: string;
  amount_minor: number;
  fee_minor: number;
  received_minor: number;
  currency: string;
  destination_account_id: string;
  schedule: string;
  expected_on: ColumnType<string, string, string>;
  debit_on: ColumnType<string, string, string>;
  document_id: string | null;
  document_version: number | null;
  acknowledged_at: Date | null;
  created_at: RequiredTimestamp;
  state_of_residence: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ComplaintsTable {
  id: string;
  organization_id: string;
  person_id: string | null;
  state: string;
  channel: string;
  summary: string;
  status: string;
  answer: string | null;
  resolution: string | null;
  opened_at: RequiredTimestamp;
  answered_at: Date | null;
  closed_at: Date | null;
}

export interface InvitationsTable {
  id: string;
  person_id: string;
  organization_id: string;
  code_hash: string;
  replaces_password: Generated<boolean>;
  created_at: RequiredTimestamp;
  expires_at: RequiredTimestamp;
  used_at: Date | null;
  revoked_at: Date | null;
}

export interface OverpaymentsTable {
  id: string;
  person_id: string;
  job_id: string;
  paycheck_id: string;
  organization_id: string;
  currency: string;
  amount_minor: number;
  recovered_minor: Generated<number>;
  written_off_minor: Generated<number>;
  status: string;
  resolution: string | null;
  installments: number | null;
  installments_left: number | null;
  resolved_by: string | null;
  periods_seen: Generated<number>;
  detected_at: RequiredTimestamp;
  resolved_at: Date | null;
  closed_at: Date | null;
  updated_at: RequiredTimestamp;
}

export interface DB {
  app_settings: AppSettingsTable;
  organizations: OrganizationsTable;
  organization_policies: OrganizationPoliciesTable;
  people: PeopleTable;
  invitations: InvitationsTable;
  accounts: AccountsTable;
  jobs: JobsTable;
  paychecks: PaychecksTable;
  earnings: EarningsTable;
  transfers: TransfersTable;
  funding_sources: FundingSourcesTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_postings: LedgerPostingsTable;
  ledger_entries: LedgerEntriesTable;
  idempotency_keys: IdempotencyKeysTable;
  oauth_clients: OauthClientsTable;
  oauth_client_organizations: OauthClientOrganizationsTable;
  oauth_payloads: OauthPayloadsTable;
  signing_keys: SigningKeysTable;
  card_vault: CardVaultTable;
  card_token_uses: CardTokenUsesTable;
  scheduled_runs: ScheduledRunsTable;
  schema_migrations: SchemaMigrationsTable;
  oauth_revocations: OauthRevocationsTable;
  login_throttle: LoginThrottleTable;
  outbox: OutboxTable;
  ach_windows: AchWindowsTable;
  ach_entries: AchEntriesTable;
  ach_files: AchFilesTable;
  ach_return_files: AchReturnFilesTable;
  ach_inbound_files: AchInboundFilesTable;
  ach_returns: AchReturnsTable;
  ach_unmatched_returns: AchUnmatchedReturnsTable;
  ach_change_notifications: AchChangeNotificationsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  compliance_rule_overrides: ComplianceRuleOverridesTable;
  disclosure_documents: DisclosureDocumentsTable;
  disclosure_acceptances: DisclosureAcceptancesTable;
  transfer_disclosures: TransferDisclosuresTable;
  complaints: ComplaintsTable;
  overpayments: OverpaymentsTable;
}

-- Disclosure documents the people of some states must accept before their first advance (docs/operators/compliance.md).
-- A document is published once and never edited: a change is a new version, and acceptances of an older version no
-- longer count (a material change). `state` NULL is the default document, for every state without one of its own.
CREATE TABLE disclosure_documents (
  id             uuid PRIMARY KEY,
  state          text CHECK (state ~ '^[A-Z]{2}$'),
  product        text NOT NULL DEFAULT 'ODP' CHECK (product IN ('ODP')),
  version        integer NOT NULL CHECK (version >= 1),
  title          text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  body           text NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
  effective_from timestamptz NOT NULL,
  published_at   timestamptz NOT NULL
);
-- NULLS NOT DISTINCT would be shorter, but PGlite and PostgreSQL 14 both must take it: the default's key is ''.
CREATE UNIQUE INDEX disclosure_documents_version_key ON disclosure_documents (coalesce(state, ''), product, version);

-- Who accepted which version, when, through which partner app and from where: the record a regulator asks for.
CREATE TABLE disclosure_acceptances (
  id          uuid PRIMARY KEY,
  person_id   uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  document_id uuid NOT NULL REFERENCES disclosure_documents (id),
  version     integer NOT NULL,
  client_id   text,
  ip_address  text,
  accepted_at timestamptz NOT NULL,
  UNIQUE (person_id, document_id)
);

INSERT INTO disclosure_documents (id, state, product, version, title, body, effective_from, published_at) VALUES
('d15c1051-0000-4000-8000-000000000001', NULL, 'ODP', 1, 'Earned wage access terms',
 'You may receive part of the wages you have already earned before payday. '
 || 'Fees: a fee applies only to the transfer schedules that show one; the fee is taken from the amount and shown '
 || 'before you confirm. A free option is always offered: a next-business-day transfer to your bank account. '
 || 'No recourse: we will never sue you, send you to collections, report you to a credit bureau, or charge interest '
 || 'or late fees. The amount is recovered from the paycheck it was taken against, on payday. '
 || 'You may cancel this service at any time, without a fee.',
 '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z'),
('d15c1051-0000-4000-8000-000000000002', 'UT', 'ODP', 1, 'Utah earned wage access terms',
 'Before each request you will see its terms: when the money arrives, the amount, the fee, the amount you receive, '
 || 'the account it goes to and the payday it is recovered on; you acknowledge them with the request. '
 || 'Fees: a fee applies only to the transfer schedules that show one. A free option is always offered: a '
 || 'next-business-day transfer to your bank account. No recourse: no suits, collections, credit reporting, interest '
 || 'or late fees. You may cancel at any time, without a fee. We give 30 days'' notice of any material change.',
 '2025-05-07T00:00:00Z', '2025-05-07T00:00:00Z');

-- What was disclosed for each advance, written in its transaction: the figures the person was shown and the version
-- of the disclosure they had accepted. Kept at least two years (WI, SC, IN keep records that long): no purge job may
-- delete them earlier, and the foreign key, without a cascade, refuses the deletion of their transfer.
CREATE TABLE transfer_disclosures (
  transfer_id            uuid PRIMARY KEY REFERENCES transfers (id),
  amount_minor           bigint NOT NULL,
  fee_minor              bigint NOT NULL,
  received_minor         bigint NOT NULL,
  currency               text NOT NULL,
  destination_account_id uuid NOT NULL,
  schedule               text NOT NULL,
  -- The day the money is expected: the rail's settlement day for the schedule (New York's banking calendar).
  expected_on            date NOT NULL,
  -- The payday of the paycheck the advance is funded from, which repays it (the first one when it spans two).
  debit_on               date NOT NULL,
  document_id            uuid REFERENCES disclosure_documents (id),
  document_version       integer,
  -- When the person acknowledged this request's own terms (Utah's data.meta.disclosure_acknowledged).
  acknowledged_at        timestamptz,
  created_at             timestamptz NOT NULL
);

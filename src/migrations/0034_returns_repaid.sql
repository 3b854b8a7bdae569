-- Money owed back to workers (RETURNS_PAYABLE) that the operator paid by other means: one row per item of
-- `ewa reports returns` (a returned payday payout, its paycheck; an advance returned after payday, its transfer),
-- written in the transaction that posts its RETURN_REPAID movement. The key is the item's id, so an item is recorded
-- paid once, whoever tries twice at the same time; the report leaves out what is here.
CREATE TABLE returns_repaid (
  item_id         uuid PRIMARY KEY,
  kind            text NOT NULL CHECK (kind IN ('PAYOUT', 'ADVANCE')),
  person_id       uuid NOT NULL REFERENCES people (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  currency        char(3) NOT NULL,
  amount_minor    bigint NOT NULL CHECK (amount_minor > 0),
  -- The operator's own record of the payment (a wire or check number): shown, never parsed.
  reference       text NOT NULL CHECK (length(reference) BETWEEN 1 AND 140),
  repaid_at       timestamptz NOT NULL
);
CREATE INDEX returns_repaid_organization_idx ON returns_repaid (organization_id, repaid_at);

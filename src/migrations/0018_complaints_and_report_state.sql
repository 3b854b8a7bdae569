-- The complaints record the states' reports count (NV, SC, MD, ... : docs/operators/compliance.md). A complaint
-- is OPEN, then ANSWERED (the operator's answer given), then CLOSED (with its resolution); one withdrawn or resolved
-- at once may be closed straight from OPEN, and then has no answer. The state is the complainant's when it was
-- opened: a person who moves later still counts where they lived then.
CREATE TABLE complaints (
  id              uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  person_id       uuid REFERENCES people (id),
  state           char(2) NOT NULL CHECK (state ~ '^[A-Z]{2}$'),
  channel         text NOT NULL CHECK (channel IN ('EMAIL', 'PHONE', 'MAIL', 'WEB', 'IN_APP', 'REGULATOR', 'OTHER')),
  summary         text NOT NULL CHECK (length(summary) BETWEEN 1 AND 5000),
  status          text NOT NULL CHECK (status IN ('OPEN', 'ANSWERED', 'CLOSED')),
  answer          text CHECK (length(answer) BETWEEN 1 AND 5000),
  resolution      text CHECK (length(resolution) BETWEEN 1 AND 5000),
  opened_at       timestamptz NOT NULL,
  answered_at     timestamptz,
  closed_at       timestamptz,
  CHECK ((answered_at IS NULL) = (answer IS NULL)),
  CHECK ((closed_at IS NULL) = (resolution IS NULL)),
  CHECK ((status = 'OPEN') = (answered_at IS NULL AND closed_at IS NULL)),
  CHECK ((status = 'ANSWERED') = (answered_at IS NOT NULL AND closed_at IS NULL)),
  CHECK (answered_at IS NULL OR answered_at >= opened_at),
  CHECK (closed_at IS NULL OR closed_at >= coalesce(answered_at, opened_at))
);
CREATE INDEX complaints_opened_idx ON complaints (opened_at, id);
CREATE INDEX complaints_state_idx ON complaints (state, opened_at);

-- The person's state of residence when the advance was made: the per-state reports count an advance where its
-- person lived then, not where they live now. Written by the advance's own statement; NULL for advances made
-- before this column, which the reports count at the person's current state and say so.
ALTER TABLE transfer_disclosures ADD COLUMN state_of_residence char(2);

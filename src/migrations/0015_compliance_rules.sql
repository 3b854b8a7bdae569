-- The operator's changes to the compliance rule file (src/compliance/state-rules.json): a rule of its own, a rule
-- of the file replaced by id (a lower cap), or a rule switched off. `rule` is the whole rule in the file's shape
-- (validated by src/compliance/compliance-rule.ts before it is written); NULL when the row only switches a file
-- rule off. Who and when, for the records a regulator may ask for.
CREATE TABLE compliance_rule_overrides (
  rule_id    text PRIMARY KEY CHECK (rule_id ~ '^[A-Z0-9][A-Z0-9_.-]{0,63}$'),
  rule       jsonb,
  disabled   boolean NOT NULL DEFAULT false,
  changed_by text NOT NULL CHECK (length(changed_by) BETWEEN 1 AND 200),
  changed_at timestamptz NOT NULL DEFAULT now(),
  CHECK (rule IS NOT NULL OR disabled)
);

-- Every change above bumps this counter in its own transaction; an advance reads it in its batch and reloads the
-- overrides when it moved, so that every server process applies a change from its next advance on.
INSERT INTO app_settings (key, value) VALUES ('compliance_rules_version', '0') ON CONFLICT (key) DO NOTHING;

-- Where the state of residence came from: the person (PATCH /rest/people/{id}) or the employer (roster import).
-- NULL for states set before this migration, whose source was not kept.
ALTER TABLE people ADD COLUMN state_of_residence_source text
  CHECK (state_of_residence_source IN ('SELF_DECLARED', 'EMPLOYER_RECORD'));

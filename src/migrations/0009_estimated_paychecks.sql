-- Payroll closes ended periods a page at a time in id order over the ESTIMATED paychecks (payroll.ts,
-- closeEndedPeriods): this index walks them in that order without reading paid paychecks or sorting each page.
CREATE INDEX paychecks_estimated_idx ON paychecks (id) WHERE status = 'ESTIMATED';

-- webhook_wanted (0013) is asked by a statement trigger on every insert of transfers and ledger entries and every
-- update of transfers and paychecks. As a SQL function called from PL/pgSQL it was planned again on each call; as a
-- PL/pgSQL function its query is prepared once per session and its plan kept. Same answer, same signature.
CREATE OR REPLACE FUNCTION webhook_wanted(VARIADIC event_types text[]) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM webhook_endpoints
    WHERE status = 'ENABLED' AND (webhook_endpoints.event_types IS NULL OR webhook_endpoints.event_types && $1));
END $$;

-- A claim of webhook deliveries ranked every due delivery by endpoint to keep each endpoint to its lanes, so each
-- claim read the whole outbox: with tens of thousands of deliveries queued (an endpoint that was down, a busy day),
-- every claim took a scan of all of them and a few deliveries, and the backlog drained ever slower. With this index
-- the claim skips from one endpoint to the next and reads each from its first due delivery
-- (src/outbox/claim-candidates.ts). A claim changes no indexed column (leased_until, attempts), so its update stays
-- in place (HOT).
CREATE INDEX outbox_webhook_receiver_idx ON outbox ((payload ->> 'endpointId'), due_at, sequence)
  WHERE topic = 'webhook.delivery';

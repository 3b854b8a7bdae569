import type { WebhookEndpoint } from '../../webhooks/webhook-endpoints.ts';
import type { DeliveryAttempt } from '../../webhooks/webhook-events.ts';

/** An endpoint's attributes as the API and `ewa webhooks --json` show them (its client only to the operator). */
export function endpointAttributes(endpoint: WebhookEndpoint, options: { withClient: boolean }) {
  return {
    ...(options.withClient ? { client_id: endpoint.clientId } : {}),
    url: endpoint.url,
    description: endpoint.description,
    event_types: endpoint.eventTypes,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

/** One attempt of the delivery log, as the API and `ewa webhooks deliveries --json` show it. */
export function deliveryAttributes(attempt: DeliveryAttempt) {
  return {
    event_id: attempt.eventId,
    event_type: attempt.eventType,
    endpoint_id: attempt.endpointId,
    attempt: attempt.attempt,
    attempted_at: attempt.attemptedAt.toISOString(),
    duration_ms: attempt.durationMs,
    status_code: attempt.statusCode,
    outcome: attempt.outcome,
    error: attempt.error,
  };
}

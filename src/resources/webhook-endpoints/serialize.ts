import type { WebhookEndpoint } from '../../webhooks/webhook-endpoints.ts';

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

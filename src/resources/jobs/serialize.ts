import { relationship, resourceObject } from '../../platform/serializer.ts';
import type { JobRow } from './store.ts';

export function jobResource(baseUrl: string, row: JobRow) {
  const externalIdentifiers: Record<string, string> = { primary_identifier: row.external_primary_identifier };
  if (row.external_employee_id !== null) externalIdentifiers.employee_id = row.external_employee_id;
  if (row.external_group !== null) externalIdentifiers.group = row.external_group;
  return resourceObject(
    baseUrl,
    'jobs',
    row.id,
    {
      external_identifiers: externalIdentifiers,
      first_name: row.first_name,
      last_name: row.last_name,
      // The description types location as a string, never null: a job without one has no such attribute.
      ...(row.location === null ? {} : { location: row.location }),
      title: row.title,
      department: row.department,
      activation_status: row.activation_status,
      wage_rate: { amount: row.wage_rate_minor, currency: row.wage_currency, frequency: row.wage_frequency },
      direct_deposit_status: row.direct_deposit_status,
    },
    {
      person: relationship('people', row.person_id),
      organization: relationship('organizations', row.organization_id),
      // A default that is not set is left out: the description's account relationship always has data.
      ...(row.direct_deposit_default_depository_id === null
        ? {}
        : {
            direct_deposit_default_depository: relationship(
              'accounts',
              row.direct_deposit_default_depository_id,
            ),
          }),
      ...(row.direct_deposit_default_card_id === null
        ? {}
        : { direct_deposit_default_card: relationship('accounts', row.direct_deposit_default_card_id) }),
    },
  );
}

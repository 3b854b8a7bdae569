import { isUuid } from '../../domain/uuid.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import { personNotFound } from './service.ts';

/** The person of the path, when it is the signed-in person; anyone else is not found, as on /rest/people. */
export function ownPerson(caller: Caller, id: string): string {
  if (caller.kind !== 'user' || !isUuid(id) || id.toLowerCase() !== caller.personId) throw personNotFound(id);
  return caller.personId;
}

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

/** True for a UUID in any case; ids on the wire are lower case. */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

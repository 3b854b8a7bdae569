const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

/** True for a UUID in any case; ids on the wire are lower case. */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** An id as a message shows it: whole when it is id-sized, cut short when it is far longer than any id here. */
export function idAsShown(text: string): string {
  return text.length <= 64 ? text : `${text.slice(0, 64)}…`;
}

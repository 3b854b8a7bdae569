/** Operator input that cannot be used (CLI flags, admin requests): the message says which value and why. */
export class InputError extends Error {
  override name = 'InputError';
}

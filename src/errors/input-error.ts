/**
 * Operator input that cannot be used (CLI flags, admin requests): the message says which value and why. `field`
 * names the value as the wire and the database name it (`access_rate_bp`), so that the admin API can point at it.
 */
export class InputError extends Error {
  override name = 'InputError';
  readonly field: string | undefined;

  constructor(message: string, options: { field?: string } = {}) {
    super(message);
    this.field = options.field;
  }
}

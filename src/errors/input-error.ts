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

/**
 * Operator input well formed on its face that the records refuse: it names a record that does not exist, or one
 * whose state forbids the change (a disabled endpoint, a currency fixed by jobs). The admin API answers it as any
 * InputError; the CLI exits 1 on it (the command ran and failed), not 2 (wrong usage).
 */
export class InputRefusedError extends InputError {
  override name = 'InputRefusedError';
}

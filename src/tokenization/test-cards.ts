/** The sandbox's debit cards (API.md, UAT values): any future expiry, any CVV, on as many people as you like. */
export const UAT_TEST_CARDS: ReadonlySet<string> = new Set([
  '4007589999999912',
  '4111111111111111',
  '5555555555554444',
]);

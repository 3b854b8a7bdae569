/** The test routing number: the only one the sandbox takes, and the sandbox bank of its ACH files. */
export const UAT_ROUTING_NUMBER = '110000000';

const WEIGHTS = [3, 7, 1, 3, 7, 1, 3, 7, 1] as const;

/** The ABA routing number check: nine digits whose 3-7-1 weighted sum is a multiple of ten. */
export function isAbaRoutingNumber(text: string): boolean {
  if (!/^\d{9}$/.test(text)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += Number(text[i]) * WEIGHTS[i]!;
  return sum % 10 === 0;
}

/** Every digit but the last four becomes X: what responses show of routing and account numbers. */
export function maskNumber(text: string): string {
  return `${'X'.repeat(Math.max(0, text.length - 4))}${text.slice(-4)}`;
}

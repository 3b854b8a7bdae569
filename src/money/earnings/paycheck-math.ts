/**
 * The arithmetic of DESIGN §4, in integer minor units. Rates are basis points. Rounding always favours the money
 * not yet earned: withholdings round up, the accessible share rounds down, so an advance can never exceed what
 * payday will cover.
 */
export interface PaycheckFigures {
  grossMinor: number;
  withholdingsMinor: number;
  netMinor: number;
}

/**
 * A paycheck's figures once `addedMinor` more gross is recorded on it, at today's withholding estimate. New
 * earnings never lower net pay: what was recorded before has been posted (and some of it may be taken), so when the employer
 * has raised the rate since, the higher withholding is taken from the new earnings only, until the whole gross
 * catches up with the rate. A correction (`addedMinor` below zero) lowers net pay by itself less the withholding it
 * no longer carries; one larger than the paycheck (a paid period's pay taken back from the current one) leaves gross
 * and net below zero.
 */
export function paycheckFigures(
  before: { grossMinor: number; withholdingsMinor: number },
  addedMinor: number,
  withholdingEstimateBp: number,
): PaycheckFigures {
  const grossMinor = before.grossMinor + addedMinor;
  // A gross below zero (corrections of a paid period on this paycheck) withholds nothing.
  const atRate = Math.ceil((Math.max(0, grossMinor) * withholdingEstimateBp) / 10_000);
  // New earnings carry at most themselves; a correction (added below zero) lowers withholdings to the rate on what
  // is left, never raises them.
  const carried = before.withholdingsMinor + Math.max(0, addedMinor);
  const withholdingsMinor = Math.max(0, Math.min(atRate, carried));
  return { grossMinor, withholdingsMinor, netMinor: grossMinor - withholdingsMinor };
}

export function accessibleShareMinor(netMinor: number, accessRateBp: number): number {
  return Math.floor((netMinor * accessRateBp) / 10_000);
}

/** Pay for one working day of a salaried job, from its wage rate and frequency (260 working days a year). */
export function salaryPerWorkingDayMinor(wageRateMinor: number, wageFrequency: string): number {
  const workingDaysPerPeriod: Record<string, number> = {
    WEEKLY: 5,
    BIWEEKLY: 10,
    TWICE_MONTHLY: 260 / 24,
    MONTHLY: 260 / 12,
    ANNUALLY: 260,
  };
  const days = workingDaysPerPeriod[wageFrequency];
  return days === undefined ? 0 : Math.floor(wageRateMinor / days);
}

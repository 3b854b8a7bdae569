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

export function paycheckFigures(grossMinor: number, withholdingEstimateBp: number): PaycheckFigures {
  const withholdingsMinor = Math.ceil((grossMinor * withholdingEstimateBp) / 10_000);
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

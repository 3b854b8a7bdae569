import type { PaymentRail, RailDestinationKind, RailOutcome } from './payment-rail.ts';

/**
 * Bank accounts through one rail, cards through another. Each rail answers only about its own payments (by their
 * rail references), so outcomes are asked of both.
 */
export function routeByDestination(bank: PaymentRail, card: PaymentRail): PaymentRail {
  return {
    name: `${bank.name}+${card.name}`,
    destinations: ['DEPOSITORY', 'CARD'].filter(
      (kind) => (kind === 'CARD' ? card : bank).destinations?.includes(kind as RailDestinationKind) ?? true,
    ) as RailDestinationKind[],
    instantDestinations: ['DEPOSITORY', 'CARD'].filter((kind) => {
      const rail = kind === 'CARD' ? card : bank;
      const paid = rail.destinations?.includes(kind as RailDestinationKind) ?? true;
      return paid && (rail.instantDestinations?.includes(kind as RailDestinationKind) ?? true);
    }) as RailDestinationKind[],
    submit: (instruction) => (instruction.destinationKind === 'CARD' ? card : bank).submit(instruction),
    async outcomes(pending, now): Promise<RailOutcome[]> {
      const [fromBank, fromCard] = await Promise.all([
        bank.outcomes(pending, now),
        card.outcomes(pending, now),
      ]);
      return [...fromBank, ...fromCard];
    },
    async returns(settled, now): Promise<RailOutcome[]> {
      const [fromBank, fromCard] = await Promise.all([
        bank.returns?.(settled, now) ?? [],
        card.returns?.(settled, now) ?? [],
      ]);
      return [...fromBank, ...fromCard];
    },
  };
}

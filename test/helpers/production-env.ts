/**
 * What production needs beside its database and key: a rail that moves real money (ACH through Nacha files) and the
 * bank it sends files to, named by a real routing number rather than the sandbox's test bank.
 */
export const PRODUCTION_RAIL_ENV = {
  EWA_RAIL: 'ach',
  EWA_ACH_IMMEDIATE_DESTINATION: '021000021',
} as const;

/**
 * What production needs beside its database and key: a rail that moves real money (ACH through Nacha files) and the
 * bank it sends files to, named by a real routing number rather than the sandbox's test bank.
 */
export const PRODUCTION_RAIL_ENV = {
  EWA_RAIL: 'ach',
  EWA_ACH_IMMEDIATE_DESTINATION: '021000021',
  EWA_ACH_IMMEDIATE_DESTINATION_NAME: 'FIRST EXAMPLE BANK',
  EWA_ACH_IMMEDIATE_ORIGIN: '1234567890',
  EWA_ACH_IMMEDIATE_ORIGIN_NAME: 'EXAMPLE EWA INC',
  EWA_ACH_COMPANY_NAME: 'EXAMPLE EWA',
  EWA_ACH_COMPANY_ID: '1234567890',
  EWA_ACH_ODFI: '02100002',
  EWA_ACH_OUTBOUND_DIR: '/var/lib/ewa/ach/outbound',
  EWA_ACH_INBOUND_DIR: '/var/lib/ewa/ach/inbound',
} as const;

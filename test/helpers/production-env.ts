/**
 * What production needs beside its database and key: a rail that moves real money (ACH through Nacha files) and the
 * bank it sends files to, named by a real routing number rather than the sandbox's test bank; and https public URLs.
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
  EWA_BASE_URL: 'https://api.example.com',
  EWA_AUTH_URL: 'https://auth.example.com',
  EWA_PAYMENTS_URL: 'https://cards.example.com',
} as const;

import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { PAGE_KEY } from '../../db/keyset-page.ts';
import {
  ACCOUNT_SUBTYPES,
  ACCOUNT_TYPES,
  FILTERABLE_SUBTYPES,
  TRANSFER_SCHEDULES,
  VERIFICATION_STATUSES,
} from '../../domain/account-values.ts';
import { NOT_BLANK_PATTERN } from '../../domain/input-text.ts';
import { isUuid } from '../../domain/uuid.ts';
import type { FilterSpec } from '../../platform/filters.ts';
import { PAGE_SIZE_MAX, pageLinks, pageOf, readPage } from '../../platform/pagination.ts';
import {
  LOOKUP_OR_USER_READ,
  OneOf,
  RelationshipBody,
  RelationshipSchema,
  ResourceIdParam,
  USER_WRITE,
  UuidString,
} from '../../platform/resource-schemas.ts';
import { type RestList, readRestListQuery, restListSchema } from '../../platform/rest-list-schema.ts';
import { errorResponses } from '../../platform/schemas.ts';
import type { CardTokenKeys } from '../../tokenization/card-token.ts';
import type { AccountPricing } from './account-pricing.ts';
import { accountResource } from './serialize.ts';
import { AccountService, type AccountView, accountNotFound } from './service.ts';
import { ACCOUNT_FILTER_FIELDS, ACCOUNT_LIST_ORDER } from './store.ts';

/** A list of accounts answers at most this many, oldest first. */
export const ACCOUNTS_LIST_MAX = PAGE_SIZE_MAX;

const AccountResource = Type.Object({
  type: Type.Literal('accounts'),
  id: UuidString,
  attributes: Type.Object({
    name: Type.String(),
    account_type: OneOf(ACCOUNT_TYPES),
    subtype: OneOf(ACCOUNT_SUBTYPES),
    verification_status: OneOf(VERIFICATION_STATUSES),
    balances: Type.Object(
      {
        available: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
        current: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
        currency: Type.String(),
      },
      { description: 'Minor units; null for bank accounts and cards, whose balances are held elsewhere.' },
    ),
    capabilities: Type.Object({
      transfer_destination: Type.Array(
        Type.Object({
          schedule: OneOf(TRANSFER_SCHEDULES),
          fee: Type.Integer({ minimum: 0, description: 'Minor units, deducted from the amount.' }),
          currency: Type.String(),
        }),
        { description: "How money can reach this account, by the employer's fee schedule." },
      ),
    }),
    details: Type.Record(Type.String(), Type.String(), {
      description:
        'EARNINGS_BALANCE: {}. DEPOSITORY: first_name, last_name, routing_number and account_number with all but the last four digits shown as X. CARD: last_four, issuer (the first six digits), first_name, last_name, expiration_month, expiration_year.',
    }),
  }),
  relationships: Type.Object({
    person: RelationshipSchema('people'),
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

const AccountCreateBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('accounts'),
    attributes: Type.Object({
      name: Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: NOT_BLANK_PATTERN,
        description: 'Not blank.',
      }),
      account_type: Type.String({
        maxLength: 32,
        description: 'DEPOSITORY or CARD.',
      }),
      subtype: Type.String({
        maxLength: 32,
        description: 'CHECKING or SAVINGS for DEPOSITORY, DEBIT for CARD.',
      }),
      details: Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), {
        maxProperties: 20,
        description:
          'DEPOSITORY: first_name, last_name, routing_number (9 digits, ABA checksum; the sandbox takes 110000000 only), account_number (4 to 17 digits; 8 to 17 in the sandbox). CARD: token (from POST /v2/cards/generic; one attempt per token), first_name, last_name, expiration_month, expiration_year (as tokenized), address_line_one, address_line_two, address_city, address_state, address_zip_code, address_country, issuer (optional; the first 6 to 8 digits).',
      }),
    }),
    relationships: Type.Object({ person: RelationshipBody('people') }),
  }),
});

interface AccountCreateDocument {
  data: {
    attributes: { name: string; account_type: string; subtype: string; details: Record<string, unknown> };
    relationships: { person: { data: { id: string } } };
  };
}

const FILTERS: FilterSpec = {
  'person.id': { type: 'uuid' },
  account_type: { type: { enum: ACCOUNT_TYPES } },
  subtype: { type: { enum: FILTERABLE_SUBTYPES } },
};

const LIST: RestList = { name: 'Accounts', filters: FILTERS, filterFields: ACCOUNT_FILTER_FIELDS };

const Params = ResourceIdParam('account_id');

export interface AccountRoutesOptions {
  db: Db;
  config: Config;
  now: () => Date;
  /** The keys card tokens are issued with, to take them back. */
  cardTokenKeys: CardTokenKeys;
  /** How transfer destinations are priced: as an advance would be, on the money's clock and rails. */
  pricing?: AccountPricing;
}

export const accountRoutes: FastifyPluginAsync<AccountRoutesOptions> = async (
  app,
  { db, config, now, cardTokenKeys, pricing },
) => {
  const accounts = new AccountService(db, config, cardTokenKeys, pricing);
  const baseUrl = config.api.publicUrl;
  const wire = (view: AccountView) => accountResource(baseUrl, view.row, view.context);

  app.get(
    '/rest/accounts',
    {
      config: { security: LOOKUP_OR_USER_READ.config },
      schema: {
        operationId: 'listAccounts',
        tags: ['Accounts'],
        summary: "The signed-in person's accounts, or a worker's earnings balances for a client",
        description: `At most ${ACCOUNTS_LIST_MAX} accounts, oldest first; filters combine with AND. A client token must give filter[person.id] and sees EARNINGS_BALANCE accounts only. An extension: page[size] and page[after] page through the list; links.next is the next page while more follow.`,
        security: LOOKUP_OR_USER_READ.openApi,
        ...restListSchema(LIST, AccountResource),
      },
    },
    async (request) => {
      const query = readRestListQuery(request.query, LIST);
      const page = readPage(request.query as Record<string, unknown>, ACCOUNT_LIST_ORDER);
      const views = await accounts.list(request.caller!, { query, page });
      const { items, next } = pageOf(
        views,
        page,
        ACCOUNT_LIST_ORDER,
        { baseUrl, path: '/rest/accounts', requestUrl: request.url },
        (view) => [(view.row as typeof view.row & { [PAGE_KEY]: string })[PAGE_KEY], view.row.id],
      );
      return { data: items.map(wire), ...pageLinks(next) };
    },
  );

  app.get(
    '/rest/accounts/:account_id',
    {
      config: { security: LOOKUP_OR_USER_READ.config },
      schema: {
        operationId: 'readAccount',
        tags: ['Accounts'],
        summary: "One of the signed-in person's accounts, or a worker's earnings balance for a client",
        security: LOOKUP_OR_USER_READ.openApi,
        params: Params,
        response: {
          200: Type.Object({ data: AccountResource }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { account_id: id } = request.params as { account_id: string };
      if (!isUuid(id)) throw accountNotFound(id);
      return { data: wire(await accounts.read(request.caller!, id.toLowerCase())) };
    },
  );

  app.post(
    '/rest/accounts',
    {
      config: {
        security: USER_WRITE.config,
        schemaErrorCodes: { missing: 'MISSING_REQUIRED_FIELD', invalid: 'INVALID_FIELDS' },
      },
      schema: {
        operationId: 'createAccount',
        tags: ['Accounts'],
        summary: 'Add a bank account or debit card for the signed-in person',
        description:
          'Answers 200 with the account. Numbers are stored encrypted and shown masked. Codes: ACCOUNT_TYPE_INVALID, ACCOUNT_SUBTYPE_INVALID, ACCOUNT_TYPE_SUBTYPE_MISMATCH, MISSING_REQUIRED_FIELD, INVALID_FIELDS, INVALID_RESOURCE_LINK, INVALID_CARD_TOKEN, INVALID_DEBIT_CARD, BANK_ACCOUNT_CREATION_BLOCKED, DEBIT_CARD_CREATION_BLOCKED, DUPLICATE_ACCOUNT.',
        security: USER_WRITE.openApi,
        body: AccountCreateBody,
        response: {
          200: Type.Object({ data: AccountResource }),
          ...errorResponses(400, 401, 403, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { data } = request.body as AccountCreateDocument;
      const view = await accounts.create(
        request.caller!,
        {
          name: data.attributes.name,
          accountType: data.attributes.account_type,
          subtype: data.attributes.subtype,
          details: data.attributes.details,
          personId: data.relationships.person.data.id,
        },
        now(),
      );
      return { data: wire(view) };
    },
  );

  app.delete(
    '/rest/accounts/:account_id',
    {
      config: { security: USER_WRITE.config },
      schema: {
        operationId: 'deleteAccount',
        tags: ['Accounts'],
        summary: 'Remove a bank account or card of the signed-in person',
        description:
          "Answers 204. EARNINGS_BALANCE accounts cannot be deleted (INVALID_PARAMETERS), nor a job's default account or the destination of a PENDING transfer (INVALID_RESOURCE_STATE). The history stays.",
        security: USER_WRITE.openApi,
        params: Params,
        response: {
          204: Type.Null({ description: 'Deleted.' }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request, reply) => {
      const { account_id: id } = request.params as { account_id: string };
      if (!isUuid(id)) throw accountNotFound(id);
      await accounts.delete(request.caller!, id.toLowerCase(), now());
      return reply.code(204).send();
    },
  );
};

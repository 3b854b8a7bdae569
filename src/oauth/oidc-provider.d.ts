// oidc-provider ships no type declarations; these cover what this project uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface KoaContextWithOIDC {
    status: number;
    body: unknown;
    path: string;
    method: string;
    type: string;
    headers: Record<string, string | string[] | undefined>;
    set(name: string, value: string): void;
    oidc?: {
      route?: string;
      client?: { clientId: string; clientAuthMethod: string };
      params?: Record<string, unknown>;
      entities?: Record<string, unknown>;
      [key: string]: unknown;
    };
    [key: string]: unknown;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id?: string; scope?: string; redirect_uri?: string };
    session?: { accountId: string; uid: string; cookie: string } | undefined;
    grantId?: string | undefined;
    returnTo: string;
    lastSubmission?: Record<string, unknown> | undefined;
    result?: Record<string, unknown> | undefined;
    /** Saves the interaction for the rest of its lifetime. */
    persist(): Promise<unknown>;
  }

  export interface GrantInstance {
    jti: string;
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    getOIDCScope(): string;
    save(): Promise<string>;
  }

  export interface ClientInstance {
    clientId: string;
    clientSecret?: string;
    clientName?: string;
    scope?: string;
    [key: string]: unknown;
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    issuer: string;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: unknown[]) => void): void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    Grant: {
      new (properties: { accountId: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    Session: {
      findByUid(uid: string): Promise<{ destroy(): Promise<void> } | undefined>;
    };
    Client: {
      prototype: { compareClientSecret(actual: string): Promise<boolean> | boolean };
      find(id: string): Promise<ClientInstance | undefined>;
    };
    AccessToken: new (
      properties: Record<string, unknown>,
    ) => { save(): Promise<string> };
    ResourceServer: new (
      identifier: string,
      data: Record<string, unknown>,
    ) => unknown;
  }

  export const errors: Record<string, new (...args: unknown[]) => Error> & {
    InvalidTarget: new () => Error;
    InvalidScope: new (description: string, scope: string) => Error;
    InvalidRequest: new (description: string) => Error;
    InvalidGrant: new (detail: string) => Error;
  };
  export default Provider;
}

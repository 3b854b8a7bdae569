import { type LookupAddress, lookup } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPrivateAddress } from './private-addresses.ts';

export interface PostOptions {
  timeoutMs: number;
  /** Loopback and private networks may be called (the sandbox); else refused before connecting (no SSRF). */
  allowPrivateAddresses: boolean;
}

/** Refused before any byte was sent: the address the URL names is not one this server calls. */
export class AddressRefused extends Error {
  override name = 'AddressRefused';
}

/**
 * POSTs a body and resolves with the status code the receiver answered (its body is read and dropped). Redirects
 * are not followed: a receiver answers where it was registered. The whole exchange is bounded by `timeoutMs`.
 */
export function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<number> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivateAddresses && isIP(host) && isPrivateAddress(host))
    return Promise.reject(new AddressRefused(`${host} is a private address`));
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        signal: AbortSignal.timeout(options.timeoutMs),
        agent: false,
        ...(options.allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }),
      },
      (response) => {
        response.on('error', reject);
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.resume();
      },
    );
    outgoing.on('error', (error) =>
      reject(error.name === 'AbortError' ? new Error(`no answer within ${options.timeoutMs} ms`) : error),
    );
    outgoing.end(body);
  });
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, refusing a name that resolves to any private address (checked on the addresses connected to). */
function publicOnlyLookup(hostname: string, options: object, callback: LookupCallback): void {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((address) => isPrivateAddress(address.address));
    if (refused) return callback(new AddressRefused(`${hostname} resolves to a private address`), []);
    if ((options as { all?: boolean }).all) return callback(null, addresses);
    const [first] = addresses;
    if (!first) return callback(new Error(`${hostname} has no address`), []);
    callback(null, first.address, first.family);
  });
}

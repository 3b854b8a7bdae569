import { promises as dns, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPrivateAddress } from './private-addresses.ts';

export interface PostOptions {
  timeoutMs: number;
  /** Loopback and private networks may be called (a sandbox on a laptop); else refused before connecting (no SSRF). */
  allowPrivateAddresses: boolean;
}

/** Refused before any byte was sent: the address the URL names is not one this server calls. */
export class AddressRefused extends Error {
  override name = 'AddressRefused';
}

/**
 * POSTs a body and resolves with the status code the receiver answered, as soon as it has answered (the rest of its
 * body is not waited for: a receiver that answers 200 and then streams is still an answer). Redirects are not
 * followed: a receiver answers where it was registered. The whole exchange is bounded by `timeoutMs`.
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
    return Promise.reject(new AddressRefused('the address is not a public one'));
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
        resolve(response.statusCode ?? 0);
        response.destroy();
      },
    );
    outgoing.on('error', (error) =>
      reject(error.name === 'AbortError' ? new Error(`no answer within ${options.timeoutMs} ms`) : error),
    );
    outgoing.end(body);
  });
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });

/**
 * Resolves a name by DNS (c-ares: not on libuv's small thread pool, where slow lookups for one receiver would hold
 * up every other, and bounded in time), refusing it when any address is private. The refusal says no more than
 * that, so that the delivery log tells a partner nothing of this host's network.
 */
function publicOnlyLookup(hostname: string, options: object, callback: LookupCallback): void {
  const all = (options as { all?: boolean }).all === true;
  Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]).then(([v4, v6]) => {
    const addresses: LookupAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length === 0) return callback(new Error(`${hostname} could not be resolved`), []);
    if (addresses.some((address) => isPrivateAddress(address.address)))
      return callback(new AddressRefused('the address is not a public one'), []);
    if (all) return callback(null, addresses);
    const [first] = addresses;
    callback(null, first!.address, first!.family);
  });
}

import { isIPv4, isIPv6 } from 'node:net';

/**
 * The rate-limit key of a client address. An IPv4 address is its own key (also when written IPv4-mapped,
 * `::ffff:192.0.2.1`). An IPv6 address is keyed by its /64 network: one subscriber usually gets a whole /64,
 * and keying each address would let a card tester rotate through 2^64 of them.
 */
export function clientAddressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` filled in and each group without leading zeros. */
function expandIPv6(ip: string): string[] {
  const withoutZone = ip.split('%')[0]!;
  const [head = '', tail] = withoutZone.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  // An embedded IPv4 tail (::1.2.3.4) takes two groups.
  const last = right.length > 0 ? right : left;
  const dotted = last.at(-1);
  if (dotted?.includes('.')) {
    const [a, b, c, d] = dotted.split('.').map(Number) as [number, number, number, number];
    last.splice(-1, 1, ((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
  }
  const missing = 8 - left.length - right.length;
  const groups = tail === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right];
  return groups.map((group) => Number.parseInt(group, 16).toString(16));
}

import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  type Hostile,
  hostileJsonBytes,
  hostileKey,
  hostileText,
  hostileTextBytes,
  hostileUrlPart,
  hostileValue,
  invalidUtf8,
  percentEncode,
  type UrlPart,
  urlPartText,
} from './hostile-values.ts';

/**
 * A change to a valid body, aimed at a node picked by `at` (modulo the nodes the body has, so the same change
 * applies to any body): drop it, replace it, or add a member beside it.
 */
export type JsonMutation =
  | { op: 'drop'; at: number }
  | { op: 'set'; at: number; value: Hostile }
  | { op: 'add'; at: number; key: string; value: Hostile };

const jsonMutation: fc.Arbitrary<JsonMutation> = fc.oneof(
  fc.record({ op: fc.constant('drop' as const), at: fc.nat() }),
  { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: hostileValue }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      at: fc.nat(),
      key: hostileKey,
      value: hostileValue,
    }),
  },
);

/**
 * A change to a valid text body (a CSV upload): remove some bytes at a place and put a hostile value there.
 */
export interface TextMutation {
  at: number;
  remove: number;
  insert: Hostile;
}

const textMutation: fc.Arbitrary<TextMutation> = fc.record({
  at: fc.nat(),
  remove: fc.oneof(fc.constant(0), fc.nat({ max: 40 })),
  insert: hostileValue,
});

/** How the text of a body is turned into bytes: UTF-8, or what a client that ignores the rule would send. */
export type Encoding = 'utf8' | 'latin1' | 'utf16le' | 'bom';

/**
 * The body of one request, as a description:
 * - `seed`: the operation's valid body (for the fixtures of the test) with up to three mutations, possibly
 *   none;
 * - `value`: any hostile value as the whole body;
 * - `cut`: the valid body cut short; `sized`: the valid body padded to about this many bytes (around the
 *   limit);
 * - `bytes`: random bytes; `none`: no body at all.
 */
export type BodyPlan =
  | { kind: 'none' }
  | { kind: 'seed'; json: JsonMutation[]; text: TextMutation[]; encoding: Encoding }
  | { kind: 'value'; value: Hostile }
  | { kind: 'cut'; at: number }
  | { kind: 'sized'; bytes: number }
  | { kind: 'bytes'; bytes: number[] };

export function bodyPlan(options: { hasBody: boolean }): fc.Arbitrary<BodyPlan> {
  const seed = fc.record({
    kind: fc.constant('seed' as const),
    json: fc.array(jsonMutation, { maxLength: 3 }),
    text: fc.array(textMutation, { maxLength: 2 }),
    encoding: fc.oneof(
      { weight: 12, arbitrary: fc.constant('utf8' as const) },
      fc.constantFrom('latin1' as const, 'utf16le' as const, 'bom' as const),
    ),
  });
  const others = [
    { weight: 2, arbitrary: hostileValue.map((value) => ({ kind: 'value' as const, value })) },
    { weight: 1, arbitrary: fc.nat().map((at) => ({ kind: 'cut' as const, at })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(8191, 8193, 1_048_575, 1_048_577, 2_000_000)
        .map((bytes) => ({ kind: 'sized' as const, bytes })),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(invalidUtf8, fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }))
        .map((bytes) => ({ kind: 'bytes' as const, bytes })),
    },
  ];
  return options.hasBody
    ? fc.oneof(
        { weight: 14, arbitrary: seed },
        { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
        ...others,
      )
    : fc.oneof(
        { weight: 14, arbitrary: fc.constant({ kind: 'none' as const }) },
        { weight: 2, arbitrary: seed },
        ...others,
      );
}

/** Bytes JSON.stringify cannot write, put back into its text where a placeholder string stands. */
class RawSlot {
  readonly bytes: Buffer;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }
}

function slotOf(value: Hostile): unknown {
  if (value.$ === 'json') return structuredClone(value.value);
  if (value.$ === 'long') return value.unit.repeat(value.times);
  return new RawSlot(hostileJsonBytes(value));
}

interface NodeRef {
  parent: Record<string, unknown> | unknown[] | undefined;
  key: string | number;
  value: unknown;
}

/** Every node of a JSON value, root first, with where it hangs. */
function nodesOf(root: unknown): NodeRef[] {
  const nodes: NodeRef[] = [{ parent: undefined, key: '', value: root }];
  for (let index = 0; index < nodes.length && nodes.length < 10_000; index++) {
    const { value } = nodes[index]!;
    if (Array.isArray(value)) {
      for (const [key, child] of value.entries()) nodes.push({ parent: value, key, value: child });
    } else if (value !== null && typeof value === 'object' && !(value instanceof RawSlot))
      for (const [key, child] of Object.entries(value))
        nodes.push({ parent: value as Record<string, unknown>, key, value: child });
  }
  return nodes;
}

/** The strings of a JSON value: their positions (as a mutation's `at`) and member names. */
export function stringNodes(value: unknown): { at: number; key: string | number }[] {
  return nodesOf(value).flatMap((node, at) =>
    typeof node.value === 'string' ? [{ at, key: node.key }] : [],
  );
}

/** Sets an own member, even one named `__proto__`. */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The valid body with its mutations applied (a copy). */
export function mutateJson(seed: unknown, mutations: JsonMutation[]): unknown {
  const holder = { root: structuredClone(seed) as unknown };
  for (const mutation of mutations) {
    const nodes = nodesOf(holder.root);
    const node = nodes[mutation.at % nodes.length]!;
    if (mutation.op === 'add') {
      const target =
        node.value !== null &&
        typeof node.value === 'object' &&
        !Array.isArray(node.value) &&
        !(node.value instanceof RawSlot)
          ? (node.value as Record<string, unknown>)
          : node.parent && !Array.isArray(node.parent)
            ? node.parent
            : undefined;
      if (target) setMember(target, mutation.key, slotOf(mutation.value));
      else holder.root = slotOf(mutation.value);
      continue;
    }
    const replacement = mutation.op === 'set' ? slotOf(mutation.value) : undefined;
    if (!node.parent) {
      holder.root = replacement;
    } else if (Array.isArray(node.parent)) {
      if (mutation.op === 'drop') node.parent.splice(node.key as number, 1);
      else node.parent[node.key as number] = replacement;
    } else if (mutation.op === 'drop') {
      delete node.parent[node.key as string];
    } else {
      setMember(node.parent, node.key as string, replacement);
    }
  }
  return holder.root;
}

/** JSON text as bytes, with the raw slots written in as they are. */
export function jsonBytes(value: unknown): Buffer {
  if (value === undefined) return Buffer.alloc(0);
  const nonce = randomBytes(6).toString('hex');
  const slots: Buffer[] = [];
  const text = JSON.stringify(value, (_key, member) =>
    member instanceof RawSlot ? `@@slot${slots.push(member.bytes) - 1}_${nonce}@@` : member,
  );
  if (text === undefined) return Buffer.alloc(0);
  const parts = text.split(new RegExp(`"@@slot(\\d+)_${nonce}@@"`));
  return Buffer.concat(
    parts.map((part, index) => (index % 2 === 0 ? Buffer.from(part) : slots[Number(part)]!)),
  );
}

function encode(bytes: Buffer, encoding: Encoding): Buffer {
  if (encoding === 'utf8') return bytes;
  if (encoding === 'bom') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
  return Buffer.from(bytes.toString('utf8'), encoding);
}

function spliceText(seed: Buffer, mutations: TextMutation[]): Buffer {
  let bytes = seed;
  for (const mutation of mutations) {
    const at = mutation.at % (bytes.length + 1);
    bytes = Buffer.concat([
      bytes.subarray(0, at),
      hostileTextBytes(mutation.insert),
      bytes.subarray(at + mutation.remove),
    ]);
  }
  return bytes;
}

/** A valid body of an operation: a JSON value, a text (CSV), or a form (name and value pairs). */
export type SeedBody =
  | { type: 'json'; value: unknown }
  | { type: 'text'; text: string }
  | { type: 'form'; fields: [string, string][] };

/** The bytes of a body plan, for an operation whose valid body is `seed` (none: `{}`). */
export function bodyBytes(
  plan: BodyPlan,
  seed: SeedBody | undefined,
  form: FormPlan | undefined,
): Buffer | undefined {
  const valid = seed ?? { type: 'json', value: {} };
  const seedBytes = () =>
    valid.type === 'json'
      ? jsonBytes(valid.value)
      : valid.type === 'text'
        ? Buffer.from(valid.text)
        : Buffer.from(formText(valid.fields, form ?? { changes: [] }));
  switch (plan.kind) {
    case 'none':
      return undefined;
    case 'seed': {
      const base =
        valid.type === 'json'
          ? jsonBytes(mutateJson(valid.value, plan.json))
          : valid.type === 'text'
            ? spliceText(Buffer.from(valid.text), plan.text)
            : Buffer.from(formText(valid.fields, form ?? { changes: [] }));
      return encode(base, plan.encoding);
    }
    case 'value':
      return valid.type === 'json' ? hostileJsonBytes(plan.value) : hostileTextBytes(plan.value);
    case 'cut': {
      const bytes = seedBytes();
      return bytes.subarray(0, plan.at % (bytes.length + 1));
    }
    case 'sized': {
      const bytes = seedBytes();
      const pad = Math.max(0, plan.bytes - bytes.length);
      if (valid.type === 'json') {
        const padded = mutateJson(valid.value, [
          { op: 'add', at: 0, key: 'padding', value: { $: 'long', unit: 'x', times: Math.max(0, pad - 14) } },
        ]);
        return jsonBytes(padded);
      }
      return Buffer.concat([bytes, Buffer.alloc(pad, 0x61)]);
    }
    case 'bytes':
      return Buffer.from(plan.bytes);
  }
}

/**
 * Changes to the fields of a form or the parameters of a query string, each aimed by `at` like a body
 * mutation: drop a field, give it a hostile value, add a field (a hostile name, or one the operation knows),
 * repeat one.
 */
export type EntryChange =
  | { op: 'drop'; at: number }
  | { op: 'set'; at: number; value: UrlPart }
  | { op: 'add'; name: UrlPart; value: UrlPart }
  | { op: 'repeat'; at: number };

export interface FormPlan {
  changes: EntryChange[];
}

/** Names worth adding to any query or form: prototype names inside and outside brackets, broken brackets. */
export const HOSTILE_NAMES = [
  'filter[__proto__]',
  'filter[constructor]',
  'filter[toString]',
  'filter[hasOwnProperty]',
  'filter[valueOf]',
  'filter[__defineGetter__]',
  'page[__proto__]',
  '__proto__',
  'constructor',
  'filter',
  'filter[]',
  'filter[',
  'filter]',
  'filter[a][b]',
  'filter[person.id][__proto__]',
  'include',
  'page[offset]',
  'page[limit]',
  'sort',
  'fields[accounts]',
] as const;

export function entryChanges(
  knownNames: readonly string[],
  values: fc.Arbitrary<UrlPart>,
): fc.Arbitrary<EntryChange[]> {
  const name = fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(...knownNames, ...HOSTILE_NAMES)
        .map((text) => ({ $: 'verbatim' as const, text })),
    },
    { weight: 1, arbitrary: hostileUrlPart },
  );
  const change: fc.Arbitrary<EntryChange> = fc.oneof(
    fc.record({ op: fc.constant('drop' as const), at: fc.nat() }),
    { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: values }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('add' as const), name, value: values }) },
    fc.record({ op: fc.constant('repeat' as const), at: fc.nat() }),
  );
  return fc.array(change, { maxLength: 4 });
}

/** Fields as name and value text, already encoded for a URL or a form. */
function changedEntries(fields: [string, string][], plan: FormPlan): [string, string][] {
  const entries: [string, string][] = fields.map(([name, value]) => [
    percentEncode(Buffer.from(name)).replace(/%5B/g, '[').replace(/%5D/g, ']'),
    percentEncode(Buffer.from(value)),
  ]);
  for (const change of plan.changes) {
    if (change.op === 'add') {
      entries.push([urlPartText(change.name), urlPartText(change.value)]);
      continue;
    }
    if (entries.length === 0) continue;
    const at = change.at % entries.length;
    if (change.op === 'drop') entries.splice(at, 1);
    else if (change.op === 'repeat') entries.push([...entries[at]!]);
    else entries[at] = [entries[at]![0], urlPartText(change.value)];
  }
  return entries;
}

/** The query string or form body of valid fields with changes applied. */
export function formText(fields: [string, string][], plan: FormPlan): string {
  return changedEntries(fields, plan)
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** Values for query parameters and form fields. */
export function entryValues(extra: fc.Arbitrary<UrlPart>[] = []): fc.Arbitrary<UrlPart> {
  return fc.oneof(
    { weight: 3, arbitrary: hostileUrlPart },
    { weight: 1, arbitrary: hostileText.map((text) => ({ $: 'text' as const, text })) },
    ...extra.map((arbitrary) => ({ weight: 3, arbitrary })),
  );
}

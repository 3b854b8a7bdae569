/**
 * The rule for JSON request bodies on /rest and /admin: a member the operation does not define is refused (400
 * INVALID_PARAMETERS naming it in source.pointer), at every level, instead of being silently ignored. Applied to
 * every route's body schema when the route is registered (json-api.ts), so that a new route cannot forget it.
 *
 * An object schema that lists its `properties` is closed (`additionalProperties: false`) unless it says otherwise;
 * one that lists none, or maps names to values (`patternProperties`, as account `details` do, each checked by
 * its service), stays open. JSON:API's own `meta` is accepted at the top of the document and on the resource
 * object, and ignored; `links`, `jsonapi` and `meta` anywhere else are members like any other.
 */

type SchemaNode = Record<string, unknown>;

export const IGNORED_META = {
  type: 'object',
  description: "JSON:API's meta object: accepted and ignored.",
} as const;

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function close(node: SchemaNode, where: string): SchemaNode {
  if (Array.isArray(node.allOf)) {
    // Each part of an allOf would refuse the other parts' members: such a body needs another way to be closed.
    throw new Error(
      `${where}: a request body cannot be closed through allOf; list its properties in one object`,
    );
  }
  const out: SchemaNode = { ...node };
  if (isNode(node.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties).map(([name, child]) => [
        name,
        isNode(child) ? close(child, `${where}/${name}`) : child,
      ]),
    );
    if (out.additionalProperties === undefined && out.patternProperties === undefined) {
      out.additionalProperties = false;
    }
  }
  if (isNode(node.items)) out.items = close(node.items, `${where}/items`);
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const list = node[keyword];
    if (Array.isArray(list))
      out[keyword] = list.map((child, index) =>
        isNode(child) ? close(child, `${where}/${keyword}/${index}`) : child,
      );
  }
  return out;
}

function withMeta(node: SchemaNode): SchemaNode {
  if (!isNode(node.properties) || Object.hasOwn(node.properties, 'meta')) return node;
  return { ...node, properties: { ...node.properties, meta: IGNORED_META } };
}

/**
 * The body schema as the route validates it: a copy with every object level closed, and JSON:API's `meta`
 * allowed on the document and on `data`. A body that is not a JSON object (a CSV upload) is left as it is.
 */
export function closedRequestBody<T>(schema: T, where: string): T {
  if (!isNode(schema) || !isNode(schema.properties)) return schema;
  const document = withMeta(schema);
  const data = (document.properties as SchemaNode).data;
  const withResourceMeta = isNode(data)
    ? { ...document, properties: { ...(document.properties as SchemaNode), data: withMeta(data) } }
    : document;
  return close(withResourceMeta, where) as T;
}

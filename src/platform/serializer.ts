/** Builders of JSON:API documents. Links are absolute, from the configured public URL, never the Host header. */
export interface ResourceIdentifier<T extends string = string> {
  type: T;
  id: string;
}

export interface Relationship<T extends string = string> {
  data: ResourceIdentifier<T> | null;
}

export interface ResourceObject<
  T extends string,
  A,
  R = Record<string, Relationship | { data: ResourceIdentifier[] }>,
> {
  type: T;
  id: string;
  attributes: A;
  relationships?: R;
  links: { self: string };
}

export function selfLink(baseUrl: string, type: string, id: string): string {
  return `${baseUrl}/rest/${type}/${id}`;
}

export function resourceObject<T extends string, A, R>(
  baseUrl: string,
  type: T,
  id: string,
  attributes: A,
  relationships?: R,
): ResourceObject<T, A, R> {
  const resource: ResourceObject<T, A, R> = {
    type,
    id,
    attributes,
    links: { self: selfLink(baseUrl, type, id) },
  };
  if (relationships !== undefined) resource.relationships = relationships;
  return resource;
}

export function relationship<T extends string>(type: T, id: string | null | undefined): Relationship<T> {
  return { data: id ? { type, id } : null };
}

export function toManyRelationship<T extends string>(
  type: T,
  ids: readonly string[],
): { data: ResourceIdentifier<T>[] } {
  return { data: ids.map((id) => ({ type, id })) };
}

export function document<D, I = never>(data: D, included?: readonly I[]): { data: D; included?: I[] } {
  return included === undefined ? { data } : { data, included: [...included] };
}

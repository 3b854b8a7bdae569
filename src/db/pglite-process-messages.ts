import type { SessionResult } from './pglite-session.ts';

/** What the process of an embedded database is started with (pglite-process-child.ts). */
export interface Order {
  pgdata: string;
  templateDir: string | null;
  shippedTemplate: boolean;
}

/** An error sent across: rebuilt on the other side with the same name, message and fields. */
export interface ErrorShape {
  name: string;
  message: string;
  stack?: string;
  fields: Record<string, unknown>;
}

export type ParentMessage =
  | { id: number; op: 'query'; sql: string; parameters: unknown[] }
  | { id: number; op: 'exec'; sql: string }
  | { op: 'close' };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: ErrorShape }
  | { id: number; result: SessionResult }
  | { id: number; results: SessionResult[] }
  | { id: number; error: ErrorShape };

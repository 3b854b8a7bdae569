import type { SessionResult, SessionStatement } from './pglite-session.ts';

/** What the process of an embedded database is started with (pglite-process-child.ts). */
export interface Order {
  pgdata: string;
  templateDir: string | null;
  shippedTemplate: boolean;
}

/** A batch's outcome as it crosses back: a failure's error as data (ErrorShape). */
export type OutcomeShape = { ok: true; result: SessionResult } | { ok: false; error: ErrorShape };

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
  | { id: number; op: 'batch'; statements: readonly SessionStatement[] }
  | { op: 'close' };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: ErrorShape }
  | { id: number; result: SessionResult }
  | { id: number; results: SessionResult[] }
  | { id: number; outcomes: OutcomeShape[] }
  | { id: number; error: ErrorShape };

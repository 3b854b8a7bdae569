import type { BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';

/**
 * What tells a file of the inbound folder from another without reading it. The change time cannot be set back
 * (utimes sets the modification time only) and moves on every write, and a file put in place by a rename has
 * another inode, so a file whose bytes change keeps its identity only if it is rewritten in place, to the same
 * size, within one tick of the file system's clock (a few milliseconds on Linux): a risk taken, since the bank's
 * transfer delivers a new file, and a return file rewritten so is read again once anything else about it changes.
 */
export interface InboundFileIdentity {
  sizeBytes: string;
  mtimeNs: string;
  ctimeNs: string;
  device: string;
  inode: string;
}

/**
 * The identity of the file a name of the inbound folder gives (a symbolic link: the file it links to) and its
 * size, or null when the name is no file (a link to a folder or to nothing) or no longer there.
 */
export async function inboundFileIdentity(
  path: string,
): Promise<{ identity: InboundFileIdentity; sizeBytes: number } | null> {
  const found = await stat(path, { bigint: true }).catch((error: NodeJS.ErrnoException) => {
    // Moved away (archived) since the folder was listed, or a link to nothing: nothing to read under this name.
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (found === null || !found.isFile()) return null;
  return { identity: identityOf(found), sizeBytes: Number(found.size) };
}

function identityOf(found: BigIntStats): InboundFileIdentity {
  return {
    sizeBytes: found.size.toString(),
    mtimeNs: found.mtimeNs.toString(),
    ctimeNs: found.ctimeNs.toString(),
    device: found.dev.toString(),
    inode: found.ino.toString(),
  };
}

export function sameIdentity(a: InboundFileIdentity, b: InboundFileIdentity): boolean {
  return (
    a.sizeBytes === b.sizeBytes &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs &&
    a.device === b.device &&
    a.inode === b.inode
  );
}

/** The identities last seen of the given names whose bytes were then claimed, by name: one statement. */
export async function knownInboundFiles(
  db: Db,
  names: readonly string[],
): Promise<Map<string, InboundFileIdentity>> {
  if (names.length === 0) return new Map();
  const { rows } = await sql<{
    file_name: string;
    size_bytes: string;
    mtime_ns: string;
    ctime_ns: string;
    device: string;
    inode: string;
  }>`select file_name, size_bytes::text as size_bytes, mtime_ns::text as mtime_ns, ctime_ns::text as ctime_ns,
      device::text as device, inode::text as inode
    from ach_inbound_files where file_name = any(${names}::text[])`.execute(db);
  return new Map(
    rows.map((row) => [
      row.file_name,
      {
        sizeBytes: row.size_bytes,
        mtimeNs: row.mtime_ns,
        ctimeNs: row.ctime_ns,
        device: row.device,
        inode: row.inode,
      },
    ]),
  );
}

/** Whether a file's bytes were claimed (read) before, by this process or another. */
export async function isClaimed(db: Db | Tx, sha256: string): Promise<boolean> {
  const { rows } = await sql`select 1 from ach_return_files where sha256 = ${sha256}`.execute(db);
  return rows.length === 1;
}

/**
 * Records the identity a name's file had before its bytes (`sha256`, claimed) were read: a later run that finds
 * the same identity skips the name. The identity is taken before the read, so a file changed meanwhile has another
 * by the next run and is read again; a record written late by a slower process only makes a name be read again.
 */
export async function rememberInboundFile(
  tx: Db | Tx,
  name: string,
  identity: InboundFileIdentity,
  sha256: string,
  now: Date,
): Promise<void> {
  // Only while the claim stands: an operator may delete it (to read a fixed file again) between the check and this.
  await sql`insert into ach_inbound_files (file_name, sha256, size_bytes, mtime_ns, ctime_ns, device, inode, seen_at)
    select ${name}, f.sha256, ${identity.sizeBytes}::bigint, ${identity.mtimeNs}::bigint, ${identity.ctimeNs}::bigint,
      ${identity.device}::numeric, ${identity.inode}::numeric, ${now.toISOString()}::timestamptz
    from ach_return_files f where f.sha256 = ${sha256}
    on conflict (file_name) do update set sha256 = excluded.sha256, size_bytes = excluded.size_bytes,
      mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, device = excluded.device, inode = excluded.inode,
      seen_at = excluded.seen_at`.execute(tx);
}

/**
 * Forgets the names that have left the folder (archived, say), so that the table holds what the folder holds, in one
 * statement; a run calls it only when the folder lists a file. A name another process recorded after this run listed
 * the folder may be forgotten too: its file is then hashed once more by the next run and found claimed by its bytes,
 * so nothing is applied twice.
 */
export async function forgetInboundFilesBut(db: Db, listed: readonly string[]): Promise<void> {
  await sql`delete from ach_inbound_files where file_name <> all(${listed}::text[])`.execute(db);
}

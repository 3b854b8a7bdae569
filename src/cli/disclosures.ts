import { readFile } from 'node:fs/promises';
import { checkPublication, type DisclosureDocument } from '../disclosures/disclosure-document.ts';
import { listDocuments, publishDocument } from '../disclosures/document-store.ts';
import { readTransferDisclosure } from '../disclosures/transfer-disclosure-store.ts';
import { isUsState } from '../domain/us-states.ts';
import { InputRefusedError } from '../errors/input-error.ts';
import { type Command, inputPath, UsageError, uuidValue, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

function documentJson(document: DisclosureDocument) {
  return {
    id: document.id,
    state: document.state,
    product: document.product,
    version: document.version,
    title: document.title,
    body: document.body,
    effective_from: new Date(document.effective_from).toISOString(),
    published_at: new Date(document.published_at).toISOString(),
  };
}

function documentLine(document: DisclosureDocument): string {
  return `${document.id}  ${(document.state ?? 'default').padEnd(7)} v${String(document.version).padEnd(3)} from ${new Date(document.effective_from).toISOString()}  ${document.title}`;
}

const list: Command = {
  name: 'disclosures list',
  summary: 'List the disclosure documents, every version',
  help: [
    'Usage: ewa disclosures list [--state XX] [--json]',
    '',
    'Each line: id, state (default: the document for every state without its own), version, effective from, title.',
  ].join('\n'),
  options: { state: { type: 'string' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const state = flags.state;
    if (state !== undefined && (typeof state !== 'string' || !isUsState(state)))
      throw new UsageError(
        `--state must be the two-letter code of a US state or DC, such as UT (got "${state}").`,
      );
    return withMigratedDatabase(context, async ({ database }) => {
      const documents = await listDocuments(database.db, state as string | undefined);
      if (flags.json) writeLine(context.stdout, JSON.stringify(documents.map(documentJson)));
      else for (const document of documents) writeLine(context.stdout, documentLine(document));
      return 0;
    });
  },
};

const publish: Command = {
  name: 'disclosures publish',
  summary: 'Publish a new version of a disclosure document (a material change: it must be accepted again)',
  help: [
    'Usage: ewa disclosures publish [--state XX] --title TEXT --file BODY.txt [--from INSTANT] [--json]',
    '',
    'Without --state: the default document, for every state without its own. The body is the file’s text, shown to',
    'the person as it is. --from: when it takes effect (an instant with its offset, such as 2026-04-01T00:00:00Z;',
    'default: now).',
    'From then on, acceptances of older versions no longer count: advances are refused DISCLOSURE_REQUIRED until',
    'the person accepts the new one.',
  ].join('\n'),
  options: {
    state: { type: 'string' },
    title: { type: 'string' },
    file: { type: 'string' },
    from: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    if (typeof flags.file !== 'string') throw new UsageError('--file names the file of the document’s text.');
    let body: string;
    try {
      body = await readFile(inputPath(context, flags.file), 'utf8');
    } catch (error) {
      throw new UsageError(`--file: ${(error as Error).message}`);
    }
    let publication: ReturnType<typeof checkPublication>;
    try {
      publication = checkPublication({
        state: flags.state,
        title: flags.title,
        body,
        effective_from: flags.from,
      });
    } catch (error) {
      const field = (error as { field?: string }).field ?? '';
      const flag = { state: '--state', title: '--title', body: '--file', effective_from: '--from' }[field];
      // The message names the field as the API does (effective_from); here it is the flag (--from).
      const message = (error as Error).message;
      const said = message.startsWith(`${field} `) ? message.slice(field.length + 1) : message;
      throw new UsageError(`${flag ?? ''} ${said}`.trim());
    }
    return withMigratedDatabase(context, async ({ database }) => {
      const document = await publishDocument(database.db, publication, (context.now ?? (() => new Date()))());
      writeLine(context.stdout, flags.json ? JSON.stringify(documentJson(document)) : documentLine(document));
      return 0;
    });
  },
};

const transferDisclosure: Command = {
  name: 'transfers disclosure',
  summary: 'What was disclosed for an advance: its figures, dates and the disclosure version accepted',
  help: ['Usage: ewa transfers disclosure TRANSFER_ID [--json]', '', 'Kept at least two years.'].join('\n'),
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    if (positionals.length !== 1) throw new UsageError('name one transfer id.');
    const id = uuidValue('the transfer id', positionals[0]!).toLowerCase();
    return withMigratedDatabase(context, async ({ database }) => {
      const view = await readTransferDisclosure(database.db, id);
      if (!view) throw new InputRefusedError(`No disclosure is recorded for transfer ${id}.`);
      if (flags.json) writeLine(context.stdout, JSON.stringify(view));
      else
        for (const [key, value] of Object.entries(view))
          writeLine(context.stdout, `${key.padEnd(24)} ${value ?? '-'}`);
      return 0;
    });
  },
};

export const disclosureCommands: readonly Command[] = [list, publish, transferDisclosure];

import { type Command, writeLine } from './command.ts';
import { openMigratedDatabase } from './open-database.ts';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply pending database migrations (the server also does this at start-up)',
  help: [
    'Usage: ewa migrate [--json]',
    '',
    'Flags:',
    '  --json   print {"applied": [names]} instead of text',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const { database, applied } = await openMigratedDatabase(context);
    // Forwarded to a running server, the database is the server's own: it stays open.
    if (!context.database) await database.close();
    if (flags.json) writeLine(context.stdout, JSON.stringify({ applied }));
    else if (applied.length === 0) writeLine(context.stdout, 'The database is up to date.');
    else for (const name of applied) writeLine(context.stdout, `applied ${name}`);
    return 0;
  },
};

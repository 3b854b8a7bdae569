import { rotateSigningKey } from '../oauth/signing-keys.ts';
import { type Command, writeLine } from './command.ts';
import { openMigratedDatabase } from './open-database.ts';

export const keysRotateCommand: Command = {
  name: 'keys rotate',
  summary: 'Make a new token signing key; the old one keeps verifying until its tokens expire',
  help: [
    'Usage: ewa keys rotate [--json]',
    '',
    'The new key signs tokens from the next start of each authorization server; API processes load it as soon',
    'as they see a token signed with it. Retired keys are kept for verification as long as a token signed with',
    'them can live, then dropped from the JWKS.',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const { config, database } = await openMigratedDatabase(context);
    try {
      const kid = await rotateSigningKey(database.db, config.masterKey, new Date());
      writeLine(context.stdout, flags.json ? JSON.stringify({ kid }) : `New signing key ${kid} is active.`);
      return 0;
    } finally {
      await database.close();
    }
  },
};

import { rotateSigningKey } from '../oauth/signing-keys.ts';
import { type Command, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

export const keysRotateCommand: Command = {
  name: 'keys rotate',
  summary: 'Make new token signing keys; the old ones keep verifying until their tokens expire',
  help: [
    'Usage: ewa keys rotate [--json]',
    '',
    'The new key signs tokens from the next start of each authorization server; API processes load it as soon',
    'as they see a token signed with it. Retired keys are kept for verification as long as a token signed with',
    'them can live, then dropped from the JWKS.',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    return withMigratedDatabase(context, async ({ config, database }) => {
      const kids = await rotateSigningKey(database.db, config.masterKey, new Date());
      writeLine(
        context.stdout,
        flags.json ? JSON.stringify({ kids }) : `New signing keys ${kids.join(', ')} are active.`,
      );
      return 0;
    });
  },
};

import { loadConfig } from '../config.ts';
import { InputRefusedError } from '../errors/input-error.ts';
import { issueUserToken } from '../oauth/issue-token.ts';
import { type Command, UsageError, uuidValue, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

export const tokensIssueCommand: Command = {
  name: 'tokens issue',
  summary: 'Sandbox only: mint a user access token for scripts and tests',
  help: [
    'Usage: ewa tokens issue --person PERSON_ID --client CLIENT_ID --scopes "user:read user:read_write" [--json]',
    '',
    'As if the person had signed in to the client and allowed the scopes. Refused when EWA_ENV=production.',
    '--json prints the token response; otherwise only the access token is printed.',
  ].join('\n'),
  options: {
    person: { type: 'string' },
    client: { type: 'string' },
    scopes: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    for (const flag of ['person', 'client', 'scopes'] as const) {
      if (typeof flags[flag] !== 'string') throw new UsageError(`--${flag} is required.`);
    }
    const personId = uuidValue('--person', String(flags.person));
    const clientId = String(flags.client);
    const scopes = String(flags.scopes)
      .split(/[\s,]+/)
      .filter(Boolean);
    const config = loadConfig(context.env);
    // Refused before the database is opened: production may have none this command could reach.
    if (config.env !== 'uat')
      throw new InputRefusedError('minting tokens is for the sandbox only (EWA_ENV=uat).');
    return withMigratedDatabase(
      context,
      async ({ database }) => {
        const response = await issueUserToken(config, database.db, {
          personId,
          clientId,
          scopes,
        });
        writeLine(context.stdout, flags.json ? JSON.stringify(response) : response.access_token);
        return 0;
      },
      config,
    );
  },
};

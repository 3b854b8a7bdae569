import { loadConfig } from '../config.ts';
import { InputError } from '../errors/input-error.ts';
import { issueUserToken } from '../oauth/issue-token.ts';
import { type Command, UsageError, writeLine } from './command.ts';
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
    const config = loadConfig(context.env);
    if (config.env !== 'uat') throw new InputError('minting tokens is for the sandbox only (EWA_ENV=uat).');
    return withMigratedDatabase(
      context,
      async ({ database }) => {
        const response = await issueUserToken(config, database.db, {
          personId: String(flags.person),
          clientId: String(flags.client),
          scopes: String(flags.scopes)
            .split(/[\s,]+/)
            .filter(Boolean),
        });
        writeLine(context.stdout, flags.json ? JSON.stringify(response) : response.access_token);
        return 0;
      },
      config,
    );
  },
};

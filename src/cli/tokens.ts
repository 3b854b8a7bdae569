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
        // Run in a process of its own, the token is for the URLs of this command's settings, which may not be the
        // server's: it would then be refused as any token of another server is, and that answer names no cause.
        if (!context.database)
          writeLine(
            context.stderr,
            `ewa tokens issue: issued by ${config.auth.publicUrl} (EWA_AUTH_URL) for ${config.api.publicUrl} ` +
              '(EWA_BASE_URL); a server whose URLs are other refuses it.',
          );
        return 0;
      },
      config,
    );
  },
};

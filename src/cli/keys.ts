import { rotateSigningKey } from '../oauth/signing-keys.ts';
import { CardVault, VaultKeyMissingError } from '../tokenization/vault.ts';
import { type CliContext, type Command, type Flags, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';
import { startProgress } from './progress.ts';

const VAULT_BATCH_SIZE = 500;

export const keysRotateCommand: Command = {
  name: 'keys rotate',
  summary: 'Make new token signing keys, or (--vault) re-seal every vaulted card under the current vault key',
  help: [
    'Usage: ewa keys rotate [--json]',
    '       ewa keys rotate --vault [--json]',
    '',
    'Without --vault: the new key signs tokens from the next start of each authorization server; API processes',
    'load it as soon as they see a token signed with it. Retired keys are kept for verification as long as a',
    'token signed with them can live, then dropped from the JWKS.',
    '',
    '--vault: put the new key first in EWA_VAULT_KEYS (KID:KEY,…; keep the old ones after it), restart the',
    'servers, then run this. Cards are re-sealed in batches of 500, each committed on its own: a run that stops',
    'half-way loses nothing, and running it again finishes the job. When it reports 0 left, the old keys can go.',
  ].join('\n'),
  options: { json: { type: 'boolean' }, vault: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    if (flags.vault) return rotateVault(flags, context);
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

async function rotateVault(flags: Flags, context: CliContext): Promise<number> {
  return withMigratedDatabase(context, async ({ config, database }) => {
    const vault = new CardVault(config.cards.vaultKeys);
    const total = await vault.countNotUnderCurrentKey(database.db);
    const progress = startProgress(context, `Re-sealing cards under key ${vault.currentKeyId}`, total);
    let done = 0;
    try {
      for (;;) {
        const count = await vault.rotateBatch(database.db, VAULT_BATCH_SIZE);
        if (count === 0) break;
        done += count;
        progress.update(Math.min(done, total));
      }
    } catch (error) {
      if (!(error instanceof VaultKeyMissingError)) throw error;
      progress.stop();
      writeLine(
        context.stderr,
        `ewa keys rotate --vault: ${error.message} ${done} cards were re-sealed first.`,
      );
      return 1;
    }
    progress.stop();
    const left = await vault.countNotUnderCurrentKey(database.db);
    writeLine(
      context.stdout,
      flags.json
        ? JSON.stringify({ key_id: vault.currentKeyId, resealed: done, left })
        : `Re-sealed ${done} cards under vault key ${vault.currentKeyId}; ${left} left under older keys.`,
    );
    return left === 0 ? 0 : 1;
  });
}

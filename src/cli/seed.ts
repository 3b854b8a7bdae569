import { loadConfig } from '../config.ts';
import { type DemoSeedOutcome, describeDemoSeed, seedDemoDataOnce } from '../seed/demo.ts';
import { GENERATED_PEOPLE_MAX, seedGeneratedPeople } from '../seed/generated.ts';
import { type Command, positiveInteger, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';
import { startProgress } from './progress.ts';

/** The `demo` field of `ewa seed --json`. */
const DEMO_OUTCOME_WORDS: Record<DemoSeedOutcome, string> = {
  SEEDED: 'seeded',
  FINISHED: 'finished',
  PRESENT: 'already-present',
  BEING_MADE: 'being-made',
};

export const seedCommand: Command = {
  name: 'seed',
  summary: 'Load the sandbox demo data, or generate many workers for load tests',
  help: [
    'Usage: ewa seed [--people N] [--json]',
    '',
    'Without --people: loads the demo organizations, people, jobs, paychecks and earnings (once per database).',
    `With --people N: generates an employer with N workers (1 to ${GENERATED_PEOPLE_MAX}), showing progress.`,
    '',
    'Flags:',
    '  --people N   how many workers to generate',
    '  --json       print the result as JSON',
  ].join('\n'),
  options: { people: { type: 'string' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const people =
      flags.people === undefined ? undefined : positiveInteger('people', flags.people, GENERATED_PEOPLE_MAX);
    const config = loadConfig(context.env);
    if (people === undefined && config.env === 'production') {
      writeLine(context.stderr, 'ewa seed: demo data is for the sandbox; EWA_ENV=production refuses it.');
      return 1;
    }
    return withMigratedDatabase(
      context,
      async ({ database }) => {
        if (people === undefined) {
          const outcome = await seedDemoDataOnce(database.db, new Date(), config, {
            soleProcess: database.kind === 'pglite',
          });
          if (flags.json) writeLine(context.stdout, JSON.stringify({ demo: DEMO_OUTCOME_WORDS[outcome] }));
          else writeLine(context.stdout, describeDemoSeed(outcome));
          return 0;
        }
        const started = performance.now();
        const progress = startProgress(context, 'Generating workers', people);
        const result = await seedGeneratedPeople(database.db, {
          people,
          now: new Date(),
          onProgress: progress.update,
        });
        progress.stop();
        const seconds = Math.round((performance.now() - started) / 100) / 10;
        if (flags.json) writeLine(context.stdout, JSON.stringify({ ...result, seconds }));
        else {
          writeLine(
            context.stdout,
            `Generated ${result.people} workers (${result.paychecks} paychecks, ${result.earnings} shifts) ` +
              `for organization ${result.organizationId} in ${seconds} s.`,
          );
        }
        return 0;
      },
      config,
    );
  },
};

/**
 * A roster source that gives its first lines, then waits until the test lets it go on: an import of it has read
 * them (all but the last, which the CSV reader keeps until it sees what follows) and stays open until `finish`. `failWith` ends it with
 * an error instead, as a client that goes away mid-upload or a disk that fails does.
 */
export interface HeldRoster {
  source: AsyncIterable<string>;
  /** Resolves once the import has taken in the first lines and asks for more. */
  reading: Promise<void>;
  finish(): void;
  failWith(error: Error): void;
}

export function heldRoster(first: string, rest: string): HeldRoster {
  let readingNow!: () => void;
  const reading = new Promise<void>((resolve) => {
    readingNow = resolve;
  });
  let go!: (error?: Error) => void;
  const released = new Promise<Error | undefined>((resolve) => {
    go = resolve;
  });
  async function* source() {
    yield first;
    readingNow();
    const error = await released;
    if (error) throw error;
    yield rest;
  }
  return { source: source(), reading, finish: () => go(), failWith: (error) => go(error) };
}

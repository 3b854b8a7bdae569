/**
 * Waits until `condition` holds, checking every 50 ms, for what arrives asynchronously (revocations reach API
 * processes by a background poll). Gives up after `timeoutMs` and lets the test's own assertion say what is wrong.
 */
export async function eventually(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

import { AppError } from '../errors/app-error.ts';

/**
 * The default parser refuses members named __proto__ (and constructor.prototype) as it refuses text that is not
 * JSON, in the same words: valid JSON refused for that says so.
 */
export function poisoningRefused(text: string): AppError | undefined {
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  return new AppError('INVALID_USER_INPUT', {
    detail:
      'The request body has a member named __proto__ (or a constructor.prototype): such members are refused.',
    source: { pointer: '' },
  });
}

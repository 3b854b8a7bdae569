import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../../src/db/database-unavailable.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { toAppError } from '../../src/errors/to-app-error.ts';

/** An error as node-postgres reports one from the server: its SQLSTATE in `code`. */
const fromServer = (code: string, message = 'error') => Object.assign(new Error(message), { code });

test('failures that mean "not now" are 503 SERVICE_UNAVAILABLE with Retry-After', () => {
  const unavailable = [
    fromServer('57014', 'canceling statement due to statement timeout'),
    fromServer('55P03', 'canceling statement due to lock timeout'),
    fromServer('25P03', 'terminating connection due to idle-in-transaction timeout'),
    fromServer('57P01', 'terminating connection due to administrator command'),
    fromServer('57P03', 'the database system is starting up'),
    fromServer('53300', 'sorry, too many clients already'),
    fromServer('08006', 'connection failure'),
    fromServer('40001', 'could not serialize access'),
    fromServer('40P01', 'deadlock detected'),
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    new Error('Connection terminated unexpectedly'),
    new DatabaseUnavailableError('no database connection: timeout exceeded when trying to connect'),
  ];
  for (const error of unavailable) {
    assert.ok(isDatabaseUnavailable(error), error.message);
    const appError = toAppError(error);
    assert.equal(appError.code, 'SERVICE_UNAVAILABLE', error.message);
    assert.equal(appError.status, 503);
    assert.match(appError.headers?.['Retry-After'] ?? '', /^[1-9]\d*$/);
    assert.doesNotMatch(appError.detail, /ECONNREFUSED|timeout exceeded|serialize|deadlock/);
  }
});

test('failures of the statement itself, and unknown ones, are not "unavailable"', () => {
  for (const error of [
    fromServer('23505', 'duplicate key value violates unique constraint'),
    fromServer('22P02', 'invalid input syntax for type uuid'),
    fromServer('42P01', 'relation does not exist'),
    new Error('something else'),
    new TypeError('x is undefined'),
    null,
    undefined,
  ]) {
    assert.equal(isDatabaseUnavailable(error), false, String(error));
    assert.equal(toAppError(error).code, 'UNEXPECTED_ERROR');
  }
  // A refusal stays what it is.
  assert.equal(toAppError(new AppError('RECORD_NOT_FOUND')).code, 'RECORD_NOT_FOUND');
});

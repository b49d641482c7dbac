import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliErrorOf } from '../../src/cli/cli-errors.js';
import { ReinError } from '../../src/host/host-errors.js';
import { failureOutcome } from '../../src/tools/observation.js';

const errno = (code: string, message: string) => Object.assign(new Error(message), { code, errno: -13, syscall: 'open', path: '/x' });

describe('what the CLI prints for an error', () => {
  it("keeps rein's codes, errnos and the engine's LEVEL_ codes, says each code once, and prints anything else as ERROR", async () => {
    expect(cliErrorOf(new ReinError('USAGE', 'no provider'))).toEqual({ code: 'USAGE', message: 'no provider' });
    expect(cliErrorOf(errno('EACCES', "EACCES: permission denied, open '/x'"))).toEqual({ code: 'EACCES', message: "permission denied, open '/x'" });
    expect(cliErrorOf(Object.assign(new Error('LEVEL_CORRUPTION: checksum mismatch'), { code: 'LEVEL_CORRUPTION' }))).toEqual({ code: 'LEVEL_CORRUPTION', message: 'checksum mismatch' });
    expect(cliErrorOf(Object.assign(new Error('The operation was aborted'), { code: 'ABORT_ERR' }))).toEqual({ code: 'ERROR', message: 'The operation was aborted (ABORT_ERR)' });
    expect(cliErrorOf(Object.assign(new TypeError('bad'), { code: 'ERR_INVALID_ARG_TYPE' })).code).toBe('ERROR');
    expect(cliErrorOf(new Error('boom'))).toEqual({ code: 'ERROR', message: 'boom' });
    // Every kind of code the CLI can print is documented.
    const readme = await readFile(fileURLToPath(new URL('../../docs/errors.md', import.meta.url)), 'utf8');
    for (const listed of ['`ERROR`', '`LEVEL_CORRUPTION`', '`LEVEL_IO_ERROR`', '`LEVEL_LOCKED`', '`EACCES`', '`ENOSPC`']) expect(readme).toContain(listed);
  });

  it('a tool failure says its code once, even when the message already starts with it', () => {
    expect(failureOutcome('InvalidInput', 'InvalidInput: bad path').observation).toBe('InvalidInput: bad path');
    expect(failureOutcome('Denied', 'permission denied').observation).toBe('Denied: permission denied');
  });
});

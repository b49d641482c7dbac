import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { probeBubblewrap } from '../../src/policy/sandbox-probe.js';
import { commandWatchdog } from '../../src/tools/command-watchdog.js';

/**
 * Whether bubblewrap works here. Tests that need it call `requireBubblewrap()`: where `CI` is set a missing
 * bubblewrap fails the test (CI installs it), elsewhere the caller may skip.
 */
export const bubblewrapWorks = async (): Promise<boolean> => (await probeBubblewrap()).available;

/** Fail (in CI) or report false when bubblewrap does not work on this machine. */
export const requireBubblewrap = async (): Promise<boolean> => {
  const probe = await probeBubblewrap();
  if (probe.available) return true;
  if (process.env.CI) throw new Error(`bubblewrap is required in CI and does not work here: ${probe.reason}`);
  return false;
};

/** Whether the fallback's watchdog (Perl, Linux) works here; in CI its absence fails the test. */
export const requireWatchdog = (): boolean => {
  const watchdog = commandWatchdog();
  if (watchdog.prefix) return true;
  if (process.env.CI) throw new Error(`the fallback's command watchdog is required in CI and does not work here: ${watchdog.reason}`);
  return false;
};

/** Whether socat is installed; in CI its absence fails the test. */
export const requireSocat = (): boolean => {
  try {
    execFileSync('socat', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI) throw new Error('socat is required in CI and is not installed');
    return false;
  }
};

/** A fresh marker a test exports inside a command (`export REIN_TEST_MARK=<marker>`) to find its processes later. */
export const newMarker = (): string => `m${randomBytes(8).toString('hex')}`;

/** The live (non-zombie) processes whose environment holds `REIN_TEST_MARK=<marker>`: only those a test started. */
export const markedProcesses = (marker: string, variable = 'REIN_TEST_MARK'): number[] => {
  const needle = `${variable}=${marker}`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environment = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (!environment.includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (!stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) found.push(Number(name));
    } catch {
      // Gone meanwhile, or not readable.
    }
  }
  return found;
};

/** Poll until `check` holds or `timeoutMs` passes (scaled for a loaded machine); resolves with the last value. */
export const eventually = async <T>(probe: () => T | Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!check(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await probe();
  }
  return value;
};

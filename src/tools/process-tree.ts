import { readdirSync, readFileSync } from 'node:fs';

/** The environment variable that marks every process of one `bash` call: `REIN_CALL=<session>:<call id>`. */
export const callMarkerVariable = 'REIN_CALL';

const processIds = (): number[] => {
  try {
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return [];
  }
};

const parentOf = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields after it start past the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return undefined;
  }
};

const isZombie = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
};

/** Every live descendant of `pid` (children first, then theirs), from `/proc` (empty where there is none). */
export const descendantsOf = (pid: number): number[] => {
  const children = new Map<number, number[]>();
  for (const candidate of processIds()) {
    const parent = parentOf(candidate);
    if (parent === undefined) continue;
    const list = children.get(parent) ?? [];
    list.push(candidate);
    children.set(parent, list);
  }
  const found: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    found.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return found;
};

/** The live (not zombie) processes whose environment carries `REIN_CALL=<marker>`: the call's own processes. */
export const processesMarked = (marker: string): number[] => {
  const needle = Buffer.from(`${callMarkerVariable}=${marker}\0`);
  const found: number[] = [];
  for (const pid of processIds()) {
    if (pid === process.pid) continue;
    try {
      const environment = readFileSync(`/proc/${pid}/environ`);
      if ((environment.indexOf(needle) === 0 || environment.includes(Buffer.concat([Buffer.from([0]), needle]))) && !isZombie(pid)) found.push(pid);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
};

/**
 * The live processes of every call of `sessionId`, from the `REIN_CALL=<session>:<call id>` marker in their
 * environment: each pid with the marker it carries (this process excluded).
 */
export const processesOfSession = (sessionId: string): Array<{ pid: number; marker: string }> => {
  const prefix = Buffer.from(`${callMarkerVariable}=${sessionId}:`);
  const found: Array<{ pid: number; marker: string }> = [];
  for (const pid of processIds()) {
    if (pid === process.pid) continue;
    try {
      const environment = readFileSync(`/proc/${pid}/environ`);
      for (let at = environment.indexOf(prefix); at !== -1; at = environment.indexOf(prefix, at + 1)) {
        if (at !== 0 && environment[at - 1] !== 0) continue;
        const end = environment.indexOf(0, at);
        const marker = environment.subarray(at + callMarkerVariable.length + 1, end === -1 ? environment.length : end).toString('utf8');
        if (!isZombie(pid)) found.push({ pid, marker });
        break;
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
};

/** Send `signal` to each pid, ignoring those already gone. */
export const signalEach = (pids: readonly number[], signal: NodeJS.Signals): void => {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
};

/** The direct children of `pid`. */
export const childrenOf = (pid: number): number[] => processIds().filter((candidate) => parentOf(candidate) === pid);

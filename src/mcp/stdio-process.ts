import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/** `setsid` puts the server in a process group of its own, which rein can kill as a whole (util-linux; absent on macOS). */
const setsidPath = ['/usr/bin/setsid', '/bin/setsid'].find((path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
});

/** How a stdio server is launched: in a process group of its own where this machine can do that. */
export const groupedCommand = (command: string, args: readonly string[]): { command: string; args: string[]; grouped: boolean } =>
  setsidPath ? { command: setsidPath, args: [command, ...args], grouped: true } : { command, args: [...args], grouped: false };

const killGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone.
  }
};

/**
 * Ties a stdio server's process group to this process: a small watcher (`sh`) holds the read end of a pipe whose
 * write end only this process has. However rein ends — a normal exit, a crash, SIGKILL — the kernel closes that
 * pipe, the watcher's `cat` returns, and it kills the group (SIGTERM, then SIGKILL two seconds later). The watcher
 * runs in its own group, so Ctrl-C at the terminal reaches rein (which closes the server itself) and not the watcher.
 */
export class ProcessGroupReaper {
  private watcher: ChildProcess | undefined;

  constructor(private readonly pgid: number) {
    // dash's kill takes no `--`: `-TERM -<pgid>` names the group.
    const script = 'cat >/dev/null 2>&1; kill -TERM -"$0" 2>/dev/null; sleep 2; kill -KILL -"$0" 2>/dev/null';
    const watcher = spawn('/bin/sh', ['-c', script, String(pgid)], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    watcher.on('error', () => undefined);
    watcher.unref();
    (watcher.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.watcher = watcher;
  }

  /** Kill the server's group now (rein closes the server), then the watcher. */
  async kill(graceMs = 1_000): Promise<void> {
    killGroup(this.pgid, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, graceMs));
    killGroup(this.pgid, 'SIGKILL');
    this.watcher?.kill('SIGKILL');
    this.watcher = undefined;
  }
}

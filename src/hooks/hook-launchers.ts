import { ReinError } from '../host/host-errors.js';
import { parseLauncher, resolveLauncher, type ResolveOptions } from '../mcp/package-launcher.js';
import { commandsRun } from '../policy/shell-commands.js';
import { parseShell } from '../policy/shell-parse.js';
import type { CommandHooksConfig } from './command-hooks.js';

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** Whether a shell line runs a package launcher anywhere (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, …). */
const runsLauncher = (command: string): boolean => commandsRun(command).commands.some((line) => parseLauncher(line.split(' ')) !== undefined);

/**
 * The command hooks as they run on the host without resolving anything from the workspace: a hook that says
 * `"sandbox": false` and is one launcher command (`npx -y <pkg> args`) runs its package from rein's packages folder
 * (`resolveLauncher`) instead; one that runs a launcher rein cannot rewrite (options it cannot read, a longer command
 * line, a package npm could not install) runs inside the sandbox instead, with a warning. Hooks in the sandbox are
 * left as they are.
 */
export const hostHooksOutsideWorkspace = async (hooks: CommandHooksConfig, workspace: string, options: ResolveOptions = {}): Promise<{ hooks: CommandHooksConfig; warnings: string[] }> => {
  const warnings: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [event, groups] of Object.entries(hooks)) {
    const changed = [];
    for (const group of groups ?? []) {
      const kept = [];
      for (const hook of group.hooks) {
        if (hook.sandbox !== false || !runsLauncher(hook.command)) {
          kept.push(hook);
          continue;
        }
        const parsed = parseShell(hook.command);
        const segment = parsed.ok && parsed.segments.length === 1 ? parsed.segments[0]! : undefined;
        const call = segment && segment.redirects.length === 0 && !segment.expanding.some(Boolean) ? parseLauncher(segment.words) : undefined;
        let why: string;
        if (call && 'packages' in call) {
          try {
            const resolved = await resolveLauncher(call, { workspace, ...options });
            kept.push({ ...hook, command: [...resolved.argv, ...call.args].map(quote).join(' ') });
            continue;
          } catch (error) {
            if (!(error instanceof ReinError)) throw error;
            why = error.message;
          }
        } else why = call ? call.unreadable : 'it runs a package launcher inside a longer command line';
        warnings.push(`the ${event} hook \`${hook.command}\` asks for the host, but ${why}: the launcher would resolve what it runs from the workspace, which the model can write, so it runs inside the sandbox`);
        kept.push({ ...hook, sandbox: true });
      }
      changed.push({ ...group, hooks: kept });
    }
    out[event] = changed;
  }
  return { hooks: out as CommandHooksConfig, warnings };
};

import type { Subscription } from 'rxjs';
import type { ToolSettled } from '../../models/tool.records.js';
import type { SessionResult } from '../host/session-host.js';
import type { ReinSession } from '../session/session-handle.js';
import { summarizeArguments } from './transcript.js';

const paint = (tty: boolean, code: number, text: string): string => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);

/**
 * Renders a running session for a person: assistant text as it streams, a progress line while a tool runs (on a
 * TTY), one line per finished tool call with its status and duration, and a final summary. Colour only on a TTY.
 */
export class LiveRenderer {
  private readonly argsByEffect = new Map<string, string>();
  private readonly startedAt = new Map<string, number>();
  private midLine = false;
  private progressShown = false;

  constructor(
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly tty = Boolean(out.isTTY),
  ) {}

  attach(session: ReinSession): Subscription {
    const subscription = session.live$.subscribe((event) => {
      if (event.type === 'model.delta' && event.channel === 'text') {
        this.clearProgress();
        this.out.write(event.actor === 'root' ? event.text : paint(this.tty, 2, event.text));
        this.midLine = !event.text.endsWith('\n');
      } else if (event.type === 'effect.started') {
        this.startedAt.set(event.effectId, Date.now());
        if (event.kind === 'executeTool' && this.tty) {
          this.endLine();
          this.out.write(paint(this.tty, 2, `  … ${event.label} ${this.argsByEffect.get(event.effectId) ?? ''}`));
          this.progressShown = true;
        }
      }
    });
    subscription.add(
      session.records$.subscribe((record) => {
        if (record.type === 'effect.requested') {
          const data = record.data as { effectId: string; kind: string; args: { arguments?: Record<string, unknown> } };
          if (data.kind === 'executeTool') this.argsByEffect.set(data.effectId, summarizeArguments(data.args.arguments ?? {}));
        } else if (record.type === 'approval.requested') {
          const data = record.data as { summary: string; reason: string };
          this.clearProgress();
          this.endLine();
          this.out.write(`  ${paint(this.tty, 33, '?')} ${data.summary} ${paint(this.tty, 2, `— needs approval: ${data.reason}`)}\n`);
        } else if (record.type === 'approval.replied') {
          const data = record.data as { decision: string; feedback?: string };
          this.out.write(`  ${paint(this.tty, 2, `→ ${data.decision}${data.feedback ? `: ${data.feedback}` : ''}`)}\n`);
        } else if (record.type === 'tool.settled') {
          const data = record.data as ToolSettled;
          const started = this.startedAt.get(data.effectId);
          const duration = started === undefined ? '' : ` (${Date.now() - started} ms)`;
          const mark = data.status === 'ok' ? paint(this.tty, 32, '✓') : paint(this.tty, 31, '✗');
          const code = data.errorCode ? ` ${paint(this.tty, 31, data.errorCode)}` : '';
          this.clearProgress();
          this.endLine();
          this.out.write(`  ${mark} ${data.name} ${this.argsByEffect.get(data.effectId) ?? ''}${code}${paint(this.tty, 2, duration)}\n`);
        }
      }),
    );
    return subscription;
  }

  /** The closing lines: outcome, turns, tool calls, tokens, time, and how to replay or inspect the session. */
  summary(result: SessionResult, startedAt: number): string {
    this.clearProgress();
    this.endLine();
    const tokens = result.usage.inputTokens + result.usage.outputTokens;
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const color = result.status === 'completed' ? 32 : result.status === 'paused' || result.status === 'interrupted' ? 33 : 31;
    const lines = [
      `${paint(this.tty, color, result.status)}${result.reason ? ` — ${result.reason}` : ''}`,
      `${result.usage.turns} turns · ${result.usage.toolCalls} tool calls · ${tokens} tokens · ${seconds} s · ${result.head} records`,
      `session ${result.sessionId}: rein show ${result.sessionId} · rein replay ${result.sessionId}${result.status === 'paused' || result.status === 'interrupted' ? ` · rein resume ${result.sessionId}` : ''}`,
    ];
    return `\n${lines.join('\n')}\n`;
  }

  private clearProgress(): void {
    if (!this.progressShown) return;
    this.out.write('\r\u001b[2K');
    this.progressShown = false;
  }

  private endLine(): void {
    if (!this.midLine) return;
    this.out.write('\n');
    this.midLine = false;
  }
}

import type { ModelMessage } from '../../models/model-contract.js';
import type { ContextAtTurn } from '../session/context-at-turn.js';

const messageText = (message: ModelMessage): string => {
  if (message.role === 'assistant' && message.toolCalls && message.toolCalls.length > 0) {
    const calls = message.toolCalls.map((call) => `  → ${call.name} ${JSON.stringify(call.arguments)} (${call.callId})`).join('\n');
    return `${message.content}${message.content ? '\n' : ''}${calls}`;
  }
  return message.content;
};

/** Render what the model saw, message by message, then every decision with its reason. */
export const renderContext = (shown: ContextAtTurn): string => {
  const { ledger } = shown;
  const out: string[] = [];
  const rebuilt = shown.rebuilt ? ` · ledger rebuilt from the log, ${shown.rebuilt.matches ? 'matching the recorded input' : 'NOT matching the recorded input (today\'s policy differs): the input shown is the recorded one'}` : '';
  out.push(`turn ${shown.turn} · ${shown.reconstructed ? 'RECONSTRUCTED with today\'s policy (this session recorded no context.projected for the turn)' : `recorded at #${shown.seq} (${ledger.effectId}, attempt ${ledger.attempt})${rebuilt}`}`);
  out.push(`model ${ledger.model ?? '?'} · tokenizer ${ledger.tokenizer} · phase ${ledger.phase} · compaction level ${ledger.compactionLevel} · ${ledger.estimatedTokens} of ${ledger.budget.total} tokens${ledger.overBudget ? ' (OVER BUDGET)' : ''}${ledger.input ? ` · input ${ledger.input}` : ''}`);
  out.push('', '== model input ==');
  for (const message of shown.input.messages) {
    const label = message.role === 'tool' ? `tool ${message.name} ${message.callId}${message.isError ? ' (error)' : ''}` : message.role;
    out.push(`--- ${label} ---`, messageText(message));
  }
  out.push(`--- tools --- ${shown.input.tools.map((tool) => tool.name).join(', ') || 'none'}`);
  if (shown.capabilities) out.push(`visible set (#${shown.capabilities.diffSeq}): ${shown.capabilities.visible.length} tools, ${shown.capabilities.deferred} deferred behind tool_search`);
  out.push('', '== decision ledger ==', `budget by source: ${Object.entries(ledger.budget.bySource).map(([source, tokens]) => `${source} ${tokens}`).join(' · ')}`);
  for (const entry of ledger.included ?? []) out.push(`+ ${entry.source} ${entry.refs.join(' ')} · ${entry.mode} · ${entry.trust} · ${entry.tokens} tokens — ${entry.reason}`);
  for (const entry of ledger.excluded ?? []) out.push(`- ${entry.source} ${entry.refs.join(' ')} (${entry.count}) · ${entry.reason}${entry.detail ? ` — ${entry.detail}` : ''}`);
  for (const entry of ledger.compacted ?? []) {
    out.push(`~ ${entry.summaryId} replaces ${entry.replaces.join(' ')} (${entry.count}) — ${entry.reason}`);
    for (const keep of entry.keeps) out.push(`    keeps ${keep.ref}${keep.prohibition ? ' (prohibition)' : ''}: ${keep.text}`);
  }
  return `${out.join('\n')}\n`;
};

import type { RecordEnvelope } from '../../models/envelope.js';
import type { CandidateScope, MemoryKind, MemoryProposed } from '../../models/memory.records.js';
import type { UserMessage } from '../../models/session.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { scopeKeyOf, type MemoryScopeKeys } from './memory-scope.js';
import { selectsFiles, selectsTests } from '../effects/test-command.js';

/** What extraction needs besides the record: the session's scope, a fresh candidate id, and what it already proposed. */
export interface ExtractionContext {
  sessionId: string;
  scope: MemoryScopeKeys;
  newCandidateId: () => string;
  /** True when the session already has a candidate with this content under this conflict key. */
  known: (content: string, conflictKeys: readonly string[]) => boolean;
}

/**
 * The content of a verified test command: which command runs this repository's tests — what stays true — and not
 * that they passed, which was true of one run (mutable state, never a durable fact; see `mutableStateOf`).
 */
export const testCommandContent = (command: string): string => `This repository's tests run with \`${command}\` (seen running them here).`;

/** The conflict key of a repository's test command. */
export const testCommandKey = (repo: string): string => `repo:${repo}:test-command`;

const statement = /^(?:(?:please|ok|okay|also|and|note:?)\s+)?(from now on|going forward|henceforth|in (?:the )?future|remember(?: that)?|always|never|(?:i|we) (?:always |usually )?prefer|(?:i|we)'?d rather|don'?t ever)\b/i;

const scopeOf = (sentence: string): CandidateScope['level'] => {
  if (/\b(this time|for now|just (?:for )?this (?:task|once|run)|only (?:for )?this (?:task|run))\b/i.test(sentence)) return 'task';
  if (/\b(on|in) this branch\b/i.test(sentence)) return 'branch';
  if (/\b(in|for) this workspace\b/i.test(sentence)) return 'workspace';
  if (/\b(all (?:my |our )?(?:projects|repos|repositories)|every (?:project|repo|repository)|everywhere|globally|in general)\b/i.test(sentence)) return 'user';
  return 'repo';
};

const kindOf = (sentence: string): MemoryKind => {
  if (/\b(prefer|rather|like|dislike|want)\b/i.test(sentence)) return 'user_preference';
  if (/^(?:\W*)remember that\b/i.test(sentence) && !/\b(always|never|should|must|use|run|skip)\b/i.test(sentence)) return 'project_fact';
  return 'procedure_rule';
};

const topicOf = (sentence: string): string | undefined => {
  if (/\b(use|using|with)\s+(npm|pnpm|yarn|bun)\b/i.test(sentence)) return 'package-manager';
  if (/\b(test command|run (?:the )?tests? with)\b/i.test(sentence)) return 'test-command';
  return undefined;
};

const sentencesOf = (text: string): string[] =>
  text.split(/(?<=[.!?])\s+|\n+/).map((sentence) => sentence.trim()).filter((sentence) => sentence.length > 0 && sentence.length <= 500);

/**
 * Runtime extraction (MG-17: from selected evidence records only, never a transcript): a passing verification that
 * ran a command (exit code 0 on record) becomes a `project_fact` candidate about that command in this repository (a verified observation);
 * a user's sentence that states a lasting preference or rule ("from now on…", "always…", "remember that…", "I
 * prefer…") becomes a candidate with source `explicit_user` and the scope the sentence names (default: this
 * repository; "this time" makes it `task`). Every candidate starts `pending` with confidence `low` (MG-2, MG-3);
 * tool output is never a source of extraction. Pure apart from `newCandidateId`.
 */
/**
 * A command that can stand in a remembered fact as it is: a program and plain arguments, at most 120 characters, with
 * no shell syntax at all — no comment (`node --test # maintainers push to main`), no second command, no quotes, no
 * substitution. The line is the model's own text: anything more could carry a sentence into every later session's
 * context as "verified here". Such a run is still a verification; it just never becomes memory.
 */
const plainTestCommand = (command: string): boolean => command.length <= 120 && /^[\w./@:+=,-]+(?: [\w./@:+=,*-]+)*$/.test(command);

export const extractCandidates = (record: RecordEnvelope, context: ExtractionContext): MemoryProposed[] => {
  if (record.type === 'verification.recorded') {
    const data = record.data as VerificationRecorded;
    const command = data.command?.trim();
    // Only a run that exited 0 is an observation; a record without an exit code is a claim.
    // A run that selects tests by name passed only the tests it selected: never "this repository's tests pass".
    // So did one given some test files, or whose package script (as recorded) selects tests or files.
    const script = data.packageScript?.script;
    if (data.status !== 'passed' || data.exitCode !== 0 || !command || !plainTestCommand(command) || selectsTests(command) || selectsFiles(command)) return [];
    if (script !== undefined && (selectsTests(script) || selectsFiles(script))) return [];
    const content = testCommandContent(command);
    const conflictKeys = [testCommandKey(context.scope.repo)];
    if (context.known(content, conflictKeys)) return [];
    return [{
      candidateId: context.newCandidateId(),
      content,
      kind: 'project_fact',
      scope: { level: 'repo', key: context.scope.repo },
      source: { type: 'verified_observation', eventIds: [record.id], ...(data.artifact ? { artifactRefs: [data.artifact] } : {}) },
      confidence: 'low',
      conflictKeys,
      createdBy: 'runtime',
    }];
  }
  if (record.type !== 'user.message' || record.actor.includes('/')) return [];
  const proposals: MemoryProposed[] = [];
  for (const sentence of sentencesOf((record.data as UserMessage).text)) {
    if (!statement.test(sentence)) continue;
    const level = scopeOf(sentence);
    const key = scopeKeyOf(level, context.scope, context.sessionId);
    const topic = topicOf(sentence);
    const conflictKeys = topic && level !== 'task' ? [`${level}:${key}:${topic}`] : [];
    if (context.known(sentence, conflictKeys)) continue;
    proposals.push({
      candidateId: context.newCandidateId(),
      content: sentence,
      kind: kindOf(sentence),
      scope: { level, key },
      source: { type: 'explicit_user', eventIds: [record.id] },
      confidence: 'low',
      conflictKeys,
      createdBy: 'runtime',
    });
  }
  return proposals;
};

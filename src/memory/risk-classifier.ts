import type { CandidateScope, MemoryKind } from '../../models/memory.records.js';
import { hasCredentialShape } from '../telemetry/redact.js';

/**
 * Why a candidate must be seen by a person before it can become memory:
 * - `permission`: it talks about permissions, approvals, sandboxing or security (a rule about them, or a way round them);
 * - `credential`: it looks like it holds a secret (keys, tokens, passwords, private keys);
 * - `private_path`: it names a private location (home directories, `.ssh`, `.aws`, `.env`);
 * - `procedural`: it would steer future execution ("always…", "from now on…", "skip…", a `procedure_rule`);
 * - `global_preference`: it claims user-level (global) scope.
 */
export type MemoryRisk = 'permission' | 'credential' | 'private_path' | 'procedural' | 'global_preference';

const permission = /\b(permissions?|approv\w*|sandbox\w*|security|secure|safety|guard ?rails?|authori[sz]\w*|authenticat\w*|sudo|root access|access control|deny rules?|allow rules?|allow[- ]?list|--yes|yolo|unrestricted|privilege\w*|policy|policies|confirm(ation)?s?)\b/i;
const askingFirst = /\b(ask(ed|ing|s)?|prompt(ed|ing|s)?|check(ed|ing)? with)\b.{0,40}\b(before|first|for|about|each time|every time)\b|\bwithout (asking|a prompt|prompting|checking)\b/i;
const bypass = /\b(skip|bypass|disable|ignore|turn off|circumvent|override|without (asking|checking|approval|permission))\b/i;
const credential = /(api[_ -]?keys?|secret|passwords?|passwd|passphrase|\btokens?\b|bearer\s+\S|private[_ -]?key|-----BEGIN|\bsk-[A-Za-z0-9_-]{8,}|\bghp_[A-Za-z0-9]{10,}|\bAKIA[0-9A-Z]{12,}|\bxox[abps]-|\b[A-Fa-f0-9]{32,}\b|\b[A-Za-z0-9+/_-]{40,}={0,2})/;
const privatePath = /(\/home\/[^/\s]+|\/Users\/[^/\s]+|\/root\b|~\/|\.ssh\b|\.aws\b|\.gnupg\b|\.npmrc\b|\.netrc\b|(^|[\s/])\.env\b|[A-Za-z]:\\Users\\)/i;
const procedural = /\b(always|never|from now on|going forward|henceforth|in (the )?future|future (tasks?|sessions?|runs?)|all (future )?(tasks|sessions|runs)|every (time|task|session|run)|next time|must|should|shall|do not|don'?t|make sure|remember to|instead of|skip|bypass)\b/i;

/**
 * Classify a candidate's risks from its content, kind and scope — never from what the proposer says about it. Any
 * risk sends the candidate to human review; none of them is ever approved automatically. Pure.
 */
export const classifyMemoryRisks = (candidate: { content: string; kind: MemoryKind; scope: Pick<CandidateScope, 'level'> }): MemoryRisk[] => {
  const text = candidate.content.normalize('NFKC');
  const risks = new Set<MemoryRisk>();
  if (permission.test(text) || askingFirst.test(text) || (bypass.test(text) && /\b(checks?|prompts?|reviews?|tests?|hooks?|verification)\b/i.test(text))) risks.add('permission');
  // Every shape the telemetry redactor removes (a URL's password, a secret-named pair, vendor keys) counts as well.
  if (credential.test(text) || hasCredentialShape(text)) risks.add('credential');
  if (privatePath.test(text)) risks.add('private_path');
  if (candidate.kind === 'procedure_rule' || procedural.test(text)) risks.add('procedural');
  if (candidate.scope.level === 'user') risks.add('global_preference');
  return [...risks];
};

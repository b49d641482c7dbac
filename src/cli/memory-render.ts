import type { RecordEnvelope } from '../../models/envelope.js';
import type { MemoryProposed } from '../../models/memory.records.js';
import type { MemoryHealthFinding } from '../memory/memory-health.js';
import type { MemoryCandidateState, MemoryRecordState } from '../projections/memory.view.js';

const clip = (text: string, width: number): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
};

const date = (at: number | undefined): string => (at === undefined ? '-' : new Date(at).toISOString().slice(0, 10));

/** One line of `rein memory list`. */
export const recordLine = (record: MemoryRecordState): string =>
  `${record.recordId}  ${record.status.padEnd(10)} ${`${record.scope.level}:${record.scope.key}`.padEnd(28)} ${record.confidence.padEnd(6)} ${record.authority.padEnd(7)} v${record.version}  ${clip(record.content, 70)}`;

/** The lines of one candidate in `rein memory review`. */
export const candidateLines = (candidate: MemoryCandidateState): string[] => {
  const review = candidate.lastReview;
  const waiting = candidate.status === 'pending' ? 'waiting for evidence' : 'needs a person';
  return [
    `${candidate.candidateId}  ${candidate.status} (${waiting})  ${candidate.kind}  ${candidate.scope.level}:${candidate.scope.key}  source ${candidate.source.type}  from ${candidate.sessionId ?? '?'}`,
    `    ${clip(candidate.content, 110)}`,
    ...(review ? [`    ${review.reason}${review.risks ? ` [risks: ${review.risks.join(', ')}]` : ''}${review.conflictsWith ? ` [conflicts: ${review.conflictsWith.join(', ')}]` : ''}`] : []),
    `    approve: rein memory approve ${candidate.candidateId} · reject: rein memory reject ${candidate.candidateId} --reason "…"`,
  ];
};

/** `rein memory show` for a record or a candidate, and its audit trail. */
export const showLines = (found: { record?: MemoryRecordState; candidate?: MemoryCandidateState | MemoryProposed; trail: readonly RecordEnvelope[] }): string[] => {
  const lines: string[] = [];
  const { record, candidate } = found;
  if (record) {
    lines.push(
      `record ${record.recordId} (${record.status}${record.statusReason ? `: ${record.statusReason}` : ''})`,
      `  content     ${record.content}`,
      `  kind        ${record.kind}`,
      `  scope       ${record.scope.level}:${record.scope.key}`,
      `  confidence  ${record.confidence}, authority ${record.authority}, version ${record.version}${record.supersedes ? `, supersedes ${record.supersedes.join(', ')}` : ''}`,
      `  approved    ${date(record.approvedAt)}; review after ${date(record.reviewAfter)}; expires ${date(record.expiresAt)}`,
      `  sources     ${record.sourceRefs.join(', ')}`,
      `  candidate   ${record.candidateId}${record.corroboratedBy ? ` (corroborated by ${record.corroboratedBy.join(', ')})` : ''}`,
    );
  }
  if (candidate && !record) {
    const status = 'status' in candidate ? candidate.status : 'not yet submitted (its session has not ended)';
    lines.push(`candidate ${candidate.candidateId} (${status})`, `  content     ${candidate.content}`, `  kind        ${candidate.kind}`, `  scope       ${candidate.scope.level}:${candidate.scope.key}`, `  source      ${candidate.source.type}: ${candidate.source.eventIds.join(', ')}`);
  }
  if (found.trail.length > 0) lines.push('audit trail:');
  for (const entry of found.trail) {
    const data = entry.data as { outcome?: string; reason?: string; by?: string; reviewer?: string; recordId?: string };
    const detail = entry.type === 'memory.reviewed' ? `${data.outcome} by ${data.reviewer}: ${data.reason}` : entry.type === 'memory.promoted' ? `as ${data.recordId}` : data.reason ? `${data.by ? `${data.by}: ` : ''}${data.reason}` : '';
    lines.push(`  #${entry.seq} ${new Date(entry.at).toISOString()} ${entry.type}${detail ? ` — ${detail}` : ''}`);
  }
  return lines;
};

/** One line of `rein memory health`. */
export const healthLine = (finding: MemoryHealthFinding): string => `${finding.check.padEnd(20)} ${finding.recordIds.join(', ')}  ${finding.detail}`;

/**
 * Whether a memory's content reports an observation of mutable state — what a test run, a build or a check found,
 * what a file holds right now — rather than something that stays true: such a line is a snapshot, and the next run
 * may find otherwise. Governance never promotes one automatically, retrieval never injects one, a contradicting run
 * expires one, and `rein memory health` names one. Returns what kind of state it observes, or undefined.
 */
export const mutableStateOf = (content: string): MutableState | undefined => {
  // A command or a path in backticks is a name, not words about what happened (`npm run test-failing`).
  const text = content.replace(/`[^`]*`/g, '`…`').trim();
  if (/^verified here:/i.test(text) && outcomeWord.test(text)) return 'a test result';
  if (checkWord.test(text) && outcomeWord.test(text)) return 'a test result';
  if (momentWord.test(text) || fileContent.test(text)) return "a file's content";
  return undefined;
};

/** The kinds of mutable state a memory can report. */
export type MutableState = 'a test result' | "a file's content";

/** What a run found: its outcome (`passes`, `failed`, `is green`, `are broken`). */
const outcomeWord = /\b(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing)?|green|broken|succeed(?:s|ed)?|successful(?:ly)?|all good)\b/i;

/** What was run: tests, a build, a check. */
const checkWord = /\b(?:tests?|specs?|suites?|builds?|lint(?:er|ing)?|type-?checks?|ci|checks?)\b/i;

/** Words that date a statement: it holds now, and may not later. */
const momentWord = /\b(?:currently|right now|at the moment|as of (?:now|today)|at the time of writing)\b/i;

/** "the file … contains / holds / is set to …": what a file holds. */
const fileContent = /\b(?:file|line \d+)\b[^.]{0,80}\b(?:contains|holds|now (?:has|reads)|is set to)\b/i;

/**
 * The active records a failing run contradicts: those reporting a test result that name the command, in backticks,
 * that this session last ran and saw fail (`Verified here: \`npm test\` … passed`).
 */
export const contradictedBy = (content: string, failedCommands: ReadonlySet<string>): string | undefined => {
  if (mutableStateOf(content) !== 'a test result') return undefined;
  for (const command of failedCommands) if (content.includes(`\`${command}\``)) return command;
  return undefined;
};

/** A sentence of a user message that restricts how the task may be done; prohibitions forbid something outright. */
export interface Constraint {
  seq: number;
  text: string;
  prohibition: boolean;
}

const prohibitionPattern = /\b(do not|don't|dont|never|must not|mustn't|should not|shouldn't|may not|cannot|can't|avoid|no (?:changes?|edits?|new)|without)\b/i;
const constraintPattern = /\b(only|must|always|keep|make sure|ensure|required?|need to|preserve)\b/i;
const MAX_LENGTH = 400;

/**
 * The constraints in a user message: every sentence or line that prohibits something (`don't`, `never`, `must
 * not`, `avoid`, …) or demands something (`only`, `must`, `always`, `keep`, …), verbatim (cut at 400 characters).
 * Deterministic and cheap; the user's messages themselves are always in the context, this list makes them auditable.
 */
export const extractConstraints = (seq: number, text: string): Constraint[] => {
  const sentences = text
    .split(/\n+|(?<=[.!?;])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0);
  const found: Constraint[] = [];
  for (const sentence of sentences) {
    const prohibition = prohibitionPattern.test(sentence);
    if (!prohibition && !constraintPattern.test(sentence)) continue;
    found.push({ seq, text: sentence.length > MAX_LENGTH ? `${sentence.slice(0, MAX_LENGTH - 1)}…` : sentence, prohibition });
  }
  return found;
};

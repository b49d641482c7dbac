/** One searchable document: its id, the words of its name (weighted higher) and of its description. */
export interface SearchDocument {
  id: string;
  name: string;
  description: string;
}

/** A ranked match with the query terms that matched it, in its name and in its description. */
export interface RankedMatch {
  id: string;
  score: number;
  nameTerms: string[];
  descriptionTerms: string[];
}

const stopWords = new Set(['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'is', 'it', 'of', 'on', 'or', 'that', 'the', 'this', 'to', 'with', 'mcp', 'tool', 'tools']);

/**
 * Words of a name or text: split on anything but letters and digits and on camelCase humps, lower-cased, stop words
 * dropped, and a plural `s` folded (`issues` finds `issue`).
 */
export const termsOf = (text: string): string[] =>
  text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((term) => term.length > 1 && !stopWords.has(term))
    .map((term) => (term.length > 3 && term.endsWith('s') && !term.endsWith('ss') ? term.slice(0, -1) : term));

/** How much more a term in a tool's name counts than one in its description. */
const nameWeight = 3;
const k1 = 1.2;
const b = 0.75;

/**
 * Okapi BM25 over name and description (name terms weighted ×3), deterministic: ties keep the documents' order.
 * Returns only documents that match at least one query term.
 */
export const rankBm25 = (documents: readonly SearchDocument[], query: string, limit: number): RankedMatch[] => {
  const queryTerms = [...new Set(termsOf(query))];
  if (queryTerms.length === 0 || documents.length === 0) return [];
  const indexed = documents.map((document) => {
    const name = termsOf(document.name);
    const description = termsOf(document.description);
    const frequencies = new Map<string, number>();
    for (const term of name) frequencies.set(term, (frequencies.get(term) ?? 0) + nameWeight);
    for (const term of description) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    return { document, name: new Set(name), description: new Set(description), frequencies, length: name.length * nameWeight + description.length };
  });
  const averageLength = indexed.reduce((sum, entry) => sum + entry.length, 0) / indexed.length || 1;
  const documentFrequency = new Map<string, number>();
  for (const term of queryTerms) documentFrequency.set(term, indexed.filter((entry) => entry.frequencies.has(term)).length);
  const matches: Array<RankedMatch & { order: number }> = [];
  indexed.forEach((entry, order) => {
    let score = 0;
    for (const term of queryTerms) {
      const frequency = entry.frequencies.get(term);
      if (!frequency) continue;
      const containing = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (indexed.length - containing + 0.5) / (containing + 0.5));
      score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * entry.length) / averageLength));
    }
    if (score <= 0) return;
    matches.push({
      id: entry.document.id,
      score: Math.round(score * 1000) / 1000,
      nameTerms: queryTerms.filter((term) => entry.name.has(term)),
      descriptionTerms: queryTerms.filter((term) => entry.description.has(term)),
      order,
    });
  });
  matches.sort((left, right) => right.score - left.score || left.order - right.order);
  return matches.slice(0, limit).map(({ order: _order, ...match }) => match);
};

/** A semantic version `major.minor.patch` with an optional pre-release (build metadata is ignored). */
export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
}

const versionPattern = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** Parse a version; undefined when it is not one. */
export const parseVersion = (text: string): SemVer | undefined => {
  const match = versionPattern.exec(text.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), prerelease: match[4] ? match[4].split('.') : [] };
};

export const isVersion = (text: string): boolean => parseVersion(text) !== undefined;

const comparePrerelease = (left: string[], right: string[]): number => {
  if (left.length === 0 || right.length === 0) return right.length - left.length;
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const a = left[index];
    const b = right[index];
    if (a === undefined) return -1;
    if (b === undefined) return 1;
    if (a === b) continue;
    const numeric = /^\d+$/.test(a) && /^\d+$/.test(b);
    if (numeric) return Number(a) - Number(b);
    return a < b ? -1 : 1;
  }
  return 0;
};

/** Negative, zero or positive as `left` is lower than, equal to or higher than `right` (semver precedence). */
export const compareVersions = (left: SemVer, right: SemVer): number =>
  left.major - right.major || left.minor - right.minor || left.patch - right.patch || comparePrerelease(left.prerelease, right.prerelease);

type Comparator = { op: '<' | '<=' | '>' | '>=' | '='; version: SemVer };

const partial = /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?$/;

/** One range term (`^1.2.3`, `~1.2`, `>=2.0.0`, `1.x`, `*`) as comparators that must all hold; undefined if malformed. */
const termComparators = (term: string): Comparator[] | undefined => {
  const operator = /^(\^|~|>=|<=|>|<|=)?\s*(.*)$/.exec(term)!;
  const op = operator[1] ?? '';
  const match = partial.exec(operator[2]!);
  if (!match) return undefined;
  const wild = (part: string | undefined) => part === undefined || /^[xX*]$/.test(part);
  const major = wild(match[1]) ? undefined : Number(match[1]);
  const minor = major === undefined || wild(match[2]) ? undefined : Number(match[2]);
  const patch = minor === undefined || wild(match[3]) ? undefined : Number(match[3]);
  const prerelease = match[4] && patch !== undefined ? match[4].split('.') : [];
  const at = (a: number, b: number, c: number, pre: string[] = []): SemVer => ({ major: a, minor: b, patch: c, prerelease: pre });
  if (major === undefined) return op === '<' || op === '>' ? [{ op: '<', version: at(0, 0, 0) }] : [];
  const low = at(major, minor ?? 0, patch ?? 0, prerelease);
  const nextUp = minor === undefined ? at(major + 1, 0, 0, ['0']) : patch === undefined ? at(major, minor + 1, 0, ['0']) : undefined;
  switch (op) {
    case '^': {
      const upper = major > 0 || minor === undefined ? at(major + 1, 0, 0, ['0']) : minor > 0 || patch === undefined ? at(0, minor + 1, 0, ['0']) : at(0, 0, patch + 1, ['0']);
      return [{ op: '>=', version: low }, { op: '<', version: upper }];
    }
    case '~':
      return [{ op: '>=', version: low }, { op: '<', version: minor === undefined ? at(major + 1, 0, 0, ['0']) : at(major, minor + 1, 0, ['0']) }];
    case '>':
      return [{ op: nextUp ? '>=' : '>', version: nextUp ?? low }];
    case '<=':
      return nextUp ? [{ op: '<', version: nextUp }] : [{ op: '<=', version: low }];
    case '>=':
    case '<':
      return [{ op, version: low }];
    default:
      return nextUp ? [{ op: '>=', version: low }, { op: '<', version: nextUp }] : [{ op: '=', version: low }];
  }
};

const holds = (version: SemVer, comparator: Comparator): boolean => {
  const order = compareVersions(version, comparator.version);
  switch (comparator.op) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    default:
      return order === 0;
  }
};

/** Parse a range (`||` alternatives of space-separated terms; `a - b` hyphen ranges); undefined when malformed. */
const parseRange = (range: string): Comparator[][] | undefined => {
  const alternatives: Comparator[][] = [];
  for (const alternative of range.split('||')) {
    const hyphen = /^\s*(\S+)\s+-\s+(\S+)\s*$/.exec(alternative);
    const terms = hyphen ? [`>=${hyphen[1]}`, `<=${hyphen[2]}`] : alternative.trim().replace(/(\^|~|>=|<=|>|<|=)\s+/g, '$1').split(/\s+/).filter(Boolean);
    const comparators: Comparator[] = [];
    for (const term of terms.length === 0 ? ['*'] : terms) {
      const parsed = termComparators(term);
      if (!parsed) return undefined;
      comparators.push(...parsed);
    }
    alternatives.push(comparators);
  }
  return alternatives;
};

export const isRange = (range: string): boolean => parseRange(range) !== undefined;

/**
 * Whether `version` satisfies `range` (npm's range syntax: `^`, `~`, comparisons, x-ranges, hyphen ranges, `||`).
 * A pre-release version satisfies a range only when some comparator names the same `major.minor.patch` with a
 * pre-release, as npm does. A malformed version or range never satisfies.
 */
export const satisfies = (version: string, range: string): boolean => {
  const parsed = parseVersion(version);
  const alternatives = parseRange(range);
  if (!parsed || !alternatives) return false;
  return alternatives.some((comparators) => {
    if (!comparators.every((comparator) => holds(parsed, comparator))) return false;
    if (parsed.prerelease.length === 0) return true;
    return comparators.some(({ version: bound }) => bound.prerelease.length > 0 && bound.prerelease[0] !== '0' && bound.major === parsed.major && bound.minor === parsed.minor && bound.patch === parsed.patch);
  });
};

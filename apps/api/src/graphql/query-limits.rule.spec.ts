import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { QUERY_LIMITS, queryLimitsRule } from './query-limits.rule';

/** A schema with a recursive type, so a query can be as deep as a client likes. */
const schema = buildSchema(`
  type Query { node: Node }
  type Node { id: ID, child: Node, children: [Node] }
`);

function errorsOf(query: string) {
  return validate(schema, parse(query), [...specifiedRules, queryLimitsRule]).map((e) => ({ message: e.message, code: e.extensions.code }));
}

const nested = (depth: number) => `{ ${'node { '.repeat(1)}${'child { '.repeat(depth - 2)}id${' }'.repeat(depth - 1)} }`;

describe('queryLimitsRule', () => {
  it(`accepts a query ${QUERY_LIMITS.maxDepth} levels deep and refuses one deeper, as QUERY_TOO_EXPENSIVE`, () => {
    expect(errorsOf(nested(QUERY_LIMITS.maxDepth))).toEqual([]);
    expect(errorsOf(nested(QUERY_LIMITS.maxDepth + 1))).toEqual([
      { message: `query is deeper than ${QUERY_LIMITS.maxDepth} levels`, code: 'QUERY_TOO_EXPENSIVE' },
    ]);
  });

  it('counts the depth that fragments add', () => {
    const chain = (n: number) => `${'child { '.repeat(n)}id${' }'.repeat(n)}`;
    // `node` is level 1 and the fragment's fields level 2: a chain of n children ends at level 2 + n.
    const viaFragment = (n: number) => `{ node { ...deep } } fragment deep on Node { ${chain(n)} }`;
    expect(errorsOf(viaFragment(QUERY_LIMITS.maxDepth - 2))).toEqual([]);
    expect(errorsOf(viaFragment(QUERY_LIMITS.maxDepth - 1))).toEqual([
      { message: `query is deeper than ${QUERY_LIMITS.maxDepth} levels`, code: 'QUERY_TOO_EXPENSIVE' },
    ]);
  });

  it(`refuses more than ${QUERY_LIMITS.maxAliases} aliases (one expensive field asked many times)`, () => {
    const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: node { id }`).join(' ')} }`;
    expect(errorsOf(aliased(QUERY_LIMITS.maxAliases))).toEqual([]);
    expect(errorsOf(aliased(QUERY_LIMITS.maxAliases + 1))).toEqual([
      { message: `query uses more than ${QUERY_LIMITS.maxAliases} aliases`, code: 'QUERY_TOO_EXPENSIVE' },
    ]);
  });

  it(`refuses more than ${QUERY_LIMITS.maxFields} fields in all, fragments spread many times included`, () => {
    // 26 fields a fragment, spread 20 times under distinct parents: 20 × 27 + 1 fields.
    const fragment = `fragment f on Node { ${Array.from({ length: 26 }, () => 'id').join(' ')} }`;
    const query = `{ node { ${Array.from({ length: 20 }, (_, i) => `c${i}: child { ...f }`).join(' ')} } } ${fragment}`;
    const errors = errorsOf(query);
    expect(errors).toEqual([{ message: `query selects more than ${QUERY_LIMITS.maxFields} fields`, code: 'QUERY_TOO_EXPENSIVE' }]);
  });

  it('measures a fragment bomb (each fragment spreads the next twice) in time linear in its size', () => {
    // 40 levels expand to 2^40 fields; measuring them one by one would take days.
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ');
    const query = `{ ...F0 } ${fragments} fragment F${levels} on Query { node { id } }`;
    const started = performance.now();
    const errors = errorsOf(query);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(errors).toContainEqual({ message: `query selects more than ${QUERY_LIMITS.maxFields} fields`, code: 'QUERY_TOO_EXPENSIVE' });
  });

  it('leaves a fragment that spreads itself to the cycle rule, without looping', () => {
    const errors = errorsOf('{ node { ...a } } fragment a on Node { id child { ...b } } fragment b on Node { ...a }');
    expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(/Cannot spread fragment "a" within itself/));
  });
});

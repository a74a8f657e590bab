import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import { ErrorCode } from '@spanforge/errors';

/** Measured shapes of legitimate dashboards stay far below these. */
export const QUERY_LIMITS = { maxDepth: 10, maxAliases: 30, maxFields: 500 };

function tooExpensive(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.QUERY_TOO_EXPENSIVE } });
}

/** What a selection set costs once every fragment in it is expanded. */
interface Cost {
  /** Fields selected, counted through every expansion. */
  fields: number;
  aliases: number;
  /** Levels of fields below this set (a set of leaf fields is 1). */
  depth: number;
}

/** Counts never grow past this: a cost over every limit is as refused as a larger one, and sums stay exact. */
const CAP = 1_000_000;
const add = (a: number, b: number) => Math.min(CAP, a + b);

/**
 * Refuses, before anything runs, documents deeper than maxDepth, with more than maxAliases aliases
 * (the cheap way to multiply an expensive field) or more than maxFields fields, all counted as if
 * every fragment spread were written out. Each fragment's cost is computed once and reused at every
 * spread, so the work is linear in the document's size: a document of fragments that each spread
 * the next twice expands to 2^n fields but costs n steps to measure. A fragment that spreads
 * itself (directly or not) is left to graphql-js's NoFragmentCycles rule and counted as empty here.
 */
export function queryLimitsRule(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of context.getDocument().definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const costs = new Map<string, Cost>();
  const measuring = new Set<string>();
  const EMPTY: Cost = { fields: 0, aliases: 0, depth: 0 };

  const fragmentCost = (name: string): Cost => {
    const known = costs.get(name);
    if (known) return known;
    const fragment = fragments.get(name);
    if (!fragment || measuring.has(name)) return EMPTY;
    measuring.add(name);
    const cost = setCost(fragment.selectionSet);
    measuring.delete(name);
    costs.set(name, cost);
    return cost;
  };

  const setCost = (set: SelectionSetNode): Cost => {
    let fields = 0;
    let aliases = 0;
    let depth = 0;
    for (const selection of set.selections) {
      let inner: Cost;
      if (selection.kind === Kind.FIELD) {
        const below = selection.selectionSet ? setCost(selection.selectionSet) : EMPTY;
        inner = { fields: add(1, below.fields), aliases: add(selection.alias ? 1 : 0, below.aliases), depth: below.depth + 1 };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) inner = setCost(selection.selectionSet);
      else inner = fragmentCost(selection.name.value);
      fields = add(fields, inner.fields);
      aliases = add(aliases, inner.aliases);
      depth = Math.max(depth, inner.depth);
    }
    return { fields, aliases, depth };
  };

  return {
    OperationDefinition(node) {
      const cost = setCost(node.selectionSet);
      if (cost.depth > QUERY_LIMITS.maxDepth) context.reportError(tooExpensive(`query is deeper than ${QUERY_LIMITS.maxDepth} levels`));
      else if (cost.aliases > QUERY_LIMITS.maxAliases)
        context.reportError(tooExpensive(`query uses more than ${QUERY_LIMITS.maxAliases} aliases`));
      else if (cost.fields > QUERY_LIMITS.maxFields)
        context.reportError(tooExpensive(`query selects more than ${QUERY_LIMITS.maxFields} fields`));
    },
  };
}

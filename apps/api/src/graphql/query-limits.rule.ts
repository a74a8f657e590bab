import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import { ErrorCode } from '@spanforge/errors';

/** Measured shapes of legitimate dashboards stay far below these. */
export const QUERY_LIMITS = { maxDepth: 10, maxAliases: 30, maxFields: 500 };

function tooExpensive(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.QUERY_TOO_EXPENSIVE } });
}

/**
 * Refuses, before anything runs, documents deeper than maxDepth, with more than maxAliases
 * aliases (the cheap way to multiply an expensive field) or more than maxFields fields in all.
 */
export function queryLimitsRule(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of context.getDocument().definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  let aliases = 0;
  let fields = 0;
  let deepest = 0;
  const walk = (set: SelectionSetNode, depth: number, seen: Set<string>) => {
    deepest = Math.max(deepest, depth);
    if (deepest > QUERY_LIMITS.maxDepth) return;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        fields++;
        if (selection.alias) aliases++;
        if (selection.selectionSet) walk(selection.selectionSet, depth + 1, seen);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet, depth, seen);
      else if (!seen.has(selection.name.value)) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) walk(fragment.selectionSet, depth, new Set([...seen, selection.name.value]));
      }
    }
  };
  return {
    OperationDefinition(node) {
      walk(node.selectionSet, 1, new Set());
      if (deepest > QUERY_LIMITS.maxDepth) context.reportError(tooExpensive(`query is deeper than ${QUERY_LIMITS.maxDepth} levels`));
      else if (aliases > QUERY_LIMITS.maxAliases) context.reportError(tooExpensive(`query uses more than ${QUERY_LIMITS.maxAliases} aliases`));
      else if (fields > QUERY_LIMITS.maxFields) context.reportError(tooExpensive(`query selects more than ${QUERY_LIMITS.maxFields} fields`));
    },
  };
}

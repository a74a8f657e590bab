import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';

/**
 * The field nodes the selection of `from` (default: the current field's nodes) asks for at `path`
 * below them, fragments followed: `[]` their own subfields, `['nodes']` those of their `nodes`.
 */
function fieldNodesAt(info: GraphQLResolveInfo, path: readonly string[], from: readonly FieldNode[] = info.fieldNodes): FieldNode[] {
  const found: FieldNode[] = [];
  const collect = (set: SelectionSetNode | undefined, depth: number): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === 'Field') {
        if (depth === path.length) found.push(selection);
        else if (selection.name.value === path[depth]) collect(selection.selectionSet, depth + 1);
      } else if (selection.kind === 'InlineFragment') collect(selection.selectionSet, depth);
      else collect(info.fragments[selection.name.value]?.selectionSet, depth);
    }
  };
  for (const node of from) collect(node.selectionSet, 0);
  return found;
}

/**
 * The names of the fields the current field's selection asks for at `path` below it (fragments
 * followed): `[]` its own subfields, `['nodes']` those of its `nodes`. Used to skip unneeded reads.
 */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[] = []): Set<string> {
  return new Set(fieldNodesAt(info, path).map((node) => node.name.value));
}

/**
 * The subfields asked for under the selections of the current field's subfield `name` that pass no
 * arguments (`spans { … }`, not `spans(first: 100) { … }`), or undefined when there is none.
 */
export function selectedWithoutArguments(info: GraphQLResolveInfo, name: string): Set<string> | undefined {
  const plain = fieldNodesAt(info, []).filter((node) => node.name.value === name && !node.arguments?.length);
  return plain.length > 0 ? new Set(fieldNodesAt(info, [], plain).map((node) => node.name.value)) : undefined;
}

import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';

/**
 * The names of the fields the current field's selection asks for at `path` below it (fragments
 * followed): `[]` its own subfields, `['nodes']` those of its `nodes`. Used to skip unneeded reads.
 */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[] = []): Set<string> {
  const found = new Set<string>();
  const collect = (set: SelectionSetNode | undefined, depth: number): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === 'Field') {
        if (depth === path.length) found.add(selection.name.value);
        else if (selection.name.value === path[depth]) collect(selection.selectionSet, depth + 1);
      } else if (selection.kind === 'InlineFragment') collect(selection.selectionSet, depth);
      else collect(info.fragments[selection.name.value]?.selectionSet, depth);
    }
  };
  for (const node of info.fieldNodes) collect(node.selectionSet, 0);
  return found;
}

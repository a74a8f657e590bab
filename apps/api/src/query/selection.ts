import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';

/** Whether the current field's selection asks for `field` (fragments included), to skip unneeded columns. */
export function selects(info: GraphQLResolveInfo, field: string): boolean {
  const visit = (set: SelectionSetNode | undefined): boolean =>
    !!set?.selections.some((selection) => {
      if (selection.kind === 'Field') return selection.name.value === field;
      if (selection.kind === 'InlineFragment') return visit(selection.selectionSet);
      const fragment = info.fragments[selection.name.value];
      return fragment ? visit(fragment.selectionSet) : false;
    });
  return info.fieldNodes.some((node) => visit(node.selectionSet));
}

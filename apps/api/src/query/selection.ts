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

/** Whether a `trace` query asks for `spans { attributes }` (one level down). */
export function selectsSpanAttributes(info: GraphQLResolveInfo): boolean {
  const spansNode = info.fieldNodes
    .flatMap((node) => node.selectionSet?.selections ?? [])
    .find((selection) => selection.kind === 'Field' && selection.name.value === 'spans');
  return !!(spansNode && spansNode.kind === 'Field' && spansNode.selectionSet?.selections.some((s) => s.kind === 'Field' && s.name.value === 'attributes'));
}

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

/** Which of `fields` the current field's selection asks for under `parent` (one level down, fragments included). */
export function selectedUnder(info: GraphQLResolveInfo, parent: string, fields: readonly string[]): string[] {
  const found = new Set<string>();
  const collect = (set: SelectionSetNode | undefined, inParent: boolean): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === 'Field') {
        if (inParent && fields.includes(selection.name.value)) found.add(selection.name.value);
        if (!inParent && selection.name.value === parent) collect(selection.selectionSet, true);
      } else if (selection.kind === 'InlineFragment') collect(selection.selectionSet, inParent);
      else {
        const fragment = info.fragments[selection.name.value];
        if (fragment) collect(fragment.selectionSet, inParent);
      }
    }
  };
  for (const node of info.fieldNodes) collect(node.selectionSet, false);
  return fields.filter((f) => found.has(f));
}

/** Whether a `trace` query asks for `spans { attributes }` (one level down). */
export function selectsSpanAttributes(info: GraphQLResolveInfo): boolean {
  const spansNode = info.fieldNodes
    .flatMap((node) => node.selectionSet?.selections ?? [])
    .find((selection) => selection.kind === 'Field' && selection.name.value === 'spans');
  return !!(spansNode && spansNode.kind === 'Field' && spansNode.selectionSet?.selections.some((s) => s.kind === 'Field' && s.name.value === 'attributes'));
}

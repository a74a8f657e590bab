/** Nest injection token for the process's Infrastructure (connections opened before Nest starts). */
export const INFRASTRUCTURE = Symbol('Infrastructure');

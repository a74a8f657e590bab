/** An error the operator can act on without a stack trace: a refused start that says what to change. */
export class StartRefused extends Error {
  override readonly name = 'StartRefused';
}

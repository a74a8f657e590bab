/**
 * Which ClickHouse failures are worth retrying as they are. A statement ClickHouse refuses for its
 * content (a value it cannot parse, too many partitions) fails the same way every time; anything
 * about the server's state or the way there (no answer, overload, limits, replicas, a restart)
 * may pass on a later try.
 */

/** Error codes of a server that is busy, restarting, overloaded or unreachable (ClickHouse src/Common/ErrorCodes.cpp). */
const TRANSIENT_CODES = new Set([
  3, // UNEXPECTED_END_OF_FILE (connection cut)
  159, // TIMEOUT_EXCEEDED
  164, // READONLY
  173, // CANNOT_ALLOCATE_MEMORY
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  203, // NO_FREE_CONNECTION
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  236, // ABORTED
  241, // MEMORY_LIMIT_EXCEEDED
  242, // TABLE_IS_READ_ONLY
  252, // TOO_MANY_PARTS — unless it is "too many partitions" (see below), merges catch up
  279, // ALL_CONNECTION_TRIES_FAILED
  285, // TOO_FEW_LIVE_REPLICAS
  319, // UNKNOWN_STATUS_OF_INSERT
  394, // QUERY_WAS_CANCELLED
  425, // SYSTEM_ERROR
  439, // CANNOT_SCHEDULE_TASK
  999, // KEEPER_EXCEPTION
]);

/** ClickHouse's error code of a failure, or undefined when the failure never reached ClickHouse (network, timeout). */
export function clickHouseErrorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const parsed = typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : typeof code === 'number' ? code : undefined;
  return parsed;
}

/**
 * True when retrying the same statement may succeed: no ClickHouse error code (the request did not
 * get an answer), or a code of the server's state. False for a refusal of the statement itself.
 */
export function isTransientClickHouseError(error: unknown): boolean {
  const code = clickHouseErrorCode(error);
  if (code === undefined) return true;
  // 252 covers both "too many parts" (merges behind: wait) and "too many partitions for single
  // INSERT block" (this insert's shape: never passes as it is).
  if (code === 252) return !/too many partitions/i.test(error instanceof Error ? error.message : '');
  return TRANSIENT_CODES.has(code);
}

export const SCORE_TYPES = ['NUMERIC', 'BOOLEAN', 'CATEGORICAL', 'TEXT'] as const;
export type ScoreType = (typeof SCORE_TYPES)[number];

/** The body of POST /v1/feedback and the submitFeedback input: public API (README.md, "Feedback"). */
export interface FeedbackInput {
  traceId: string;
  spanId?: string | null;
  name: string;
  value: number | boolean | string;
  comment?: string | null;
  source?: string | null;
  /**
   * The client's id, naming one score of the project (its trace and name): sending it again keeps
   * one score, the newest value winning; with another trace or name it is refused (CONFLICT).
   * Generated when absent.
   */
  id?: string | null;
}

export interface ScoreConfig {
  id: string;
  name: string;
  dataType: ScoreType;
  minValue: number | null;
  maxValue: number | null;
  categories: string[] | null;
}

/** A validated score, as stored. */
/** The project a score belongs to. */
export interface FeedbackScope {
  tenantId: string;
  projectId: string;
}

export interface FeedbackRecord {
  id: string;
  traceId: string;
  spanId: string;
  name: string;
  dataType: ScoreType;
  valueNumber: number | null;
  valueText: string;
  comment: string;
  source: string;
}

/** What a browser-safe feedback token allows: one trace, one score name, until `expiresAt`. */
export interface FeedbackTokenClaims {
  tenantId: string;
  projectId: string;
  traceId: string;
  name: string;
  /** Seconds since the epoch. */
  expiresAt: number;
  /** The API key that made the token: revoking the key ends its tokens. Absent in tokens made before it was recorded. */
  apiKeyId?: string;
}

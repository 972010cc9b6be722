/**
 * The range of `GET /v1/usage`: its default and its bound (the route table and the route share them).
 * @module
 */

/** Days `GET /v1/usage` covers without `from`, and the most one call may ask for. */
export const USAGE_RANGE = Object.freeze({ defaultDays: 30, maxDays: 366 });

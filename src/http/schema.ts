/**
 * The type of the JSON Schemas of the API (schemas.ts and the schema pieces it gathers).
 * @module
 */

/** A JSON Schema object. */
export type Schema = Readonly<Record<string, unknown>>;

/**
 * Request schemas without `default`: client generators read a `default` as "always present" (openapi-typescript's
 * `defaultNonNullable`, on by default, makes such a property required in a `$ref`'d body schema), so a body the
 * server accepts without the field would not type-check. The default stays in the description, for people.
 * @module
 */
import type { Schema } from './schemas.js';

/** The names of the component schemas `roots` refer to, directly or through other components. */
export function referencedSchemas(
  roots: readonly string[],
  schemas: Readonly<Record<string, Schema>>,
): Set<string> {
  const found = new Set<string>();
  const visit = (name: string): void => {
    if (found.has(name) || schemas[name] === undefined) return;
    found.add(name);
    for (const match of JSON.stringify(schemas[name]).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      visit(match[1] as string);
    }
  };
  for (const root of roots) visit(root);
  return found;
}

/**
 * A copy of `schema` in which no subschema has a `default`: each one's value is told at the end of its
 * description instead (`Default: true.`).
 * @example
 * withoutDefaults({ type: 'boolean', default: true, description: 'Start at once.' });
 * // { type: 'boolean', description: 'Start at once. Default: true.' }
 */
export function withoutDefaults(schema: Schema): Schema {
  return strip(schema) as Schema;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (typeof value !== 'object' || value === null) return value;
  const { default: fallback, ...rest } = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(rest)) {
    copy[key] =
      key === 'properties' && typeof inner === 'object' && inner !== null && !Array.isArray(inner)
        ? // A map of property names (one may be called "default"), each to a schema.
          Object.fromEntries(Object.entries(inner).map(([name, property]) => [name, strip(property)]))
        : strip(inner);
  }
  if (fallback !== undefined) {
    const told = `Default: ${JSON.stringify(fallback)}.`;
    const description = typeof copy.description === 'string' ? copy.description.trim() : '';
    copy.description = description === '' ? told : `${description} ${told}`;
  }
  return copy;
}

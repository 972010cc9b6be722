import { describe, expect, it } from 'vitest';
import { OptionsError } from '../src/errors.js';
import { integerOption, VERIFY_FIELDS } from '../src/option-fields.js';
import { DEFAULTS, resolveOptions } from '../src/options.js';

const rows = Object.entries(VERIFY_FIELDS);

describe('VERIFY_FIELDS', () => {
  it('gives DEFAULTS every integer and boolean default', () => {
    for (const [name, field] of rows) {
      if (field.kind === 'custom') continue;
      expect(DEFAULTS[name as keyof typeof DEFAULTS], name).toBe(field.default);
    }
  });

  it.each(rows.filter(([, field]) => field.kind === 'integer'))(
    'checks the integer option %s against its row',
    (name, field) => {
      if (field.kind !== 'integer') throw new Error('not an integer row');
      expect(resolveOptions({ [name]: field.min })[name as 'timeoutMs']).toBe(field.min);
      expect(resolveOptions({ [name]: field.max })[name as 'timeoutMs']).toBe(field.max);
      expect(resolveOptions({})[name as 'timeoutMs']).toBe(field.default);
      for (const bad of [field.min - 1, field.max + 1, 1.5, '5', Number.NaN, null, 10n]) {
        expect(() => resolveOptions({ [name]: bad }), `${name}=${String(bad)}`).toThrow(
          new OptionsError(name, `must be an integer ${field.min}-${field.max}`),
        );
      }
    },
  );

  it.each(rows.filter(([, field]) => field.kind === 'boolean'))(
    'checks the boolean option %s against its row',
    (name, field) => {
      if (field.kind !== 'boolean') throw new Error('not a boolean row');
      expect(resolveOptions({})[name as 'dns']).toBe(field.default);
      expect(resolveOptions({ [name]: !field.default })[name as 'dns']).toBe(!field.default);
      for (const bad of ['true', 1, null, {}]) {
        expect(() => resolveOptions({ [name]: bad })).toThrow(`${name} must be a boolean`);
      }
    },
  );

  it('knows exactly its rows: any other key is refused, a look-alike included', () => {
    expect(() => resolveOptions({ timeoutMS: 5 } as never)).toThrow('timeoutMS is not a known option');
    expect(() => resolveOptions({ tіmeoutMs: 5 } as never)).toThrow('is not a known option');
    expect(() => resolveOptions(Object.fromEntries(rows.map(([name]) => [name, undefined])))).not.toThrow();
  });
});

describe('integerOption', () => {
  it('answers the fallback for undefined and the value within range', () => {
    expect(integerOption(undefined, 'n', 7, 1, 10)).toBe(7);
    expect(integerOption(10, 'n', 7, 1, 10)).toBe(10);
  });

  it('names the option and its range for anything else', () => {
    for (const bad of [0, 11, 2.5, '3', Number.POSITIVE_INFINITY, [], 'ꝏ']) {
      expect(() => integerOption(bad, 'chunkSize', 7, 1, 10)).toThrow('chunkSize must be an integer 1-10');
    }
  });
});

import { describe, expect, it } from 'vitest';
import { referencedSchemas, withoutDefaults } from '../../src/http/request-defaults.js';

describe('request schemas without defaults', () => {
  it('moves every default into the description, at any depth, and keeps a property called "default"', () => {
    expect(
      withoutDefaults({
        type: 'object',
        properties: {
          auto_start: { type: 'boolean', default: true, description: 'Start at once.' },
          default: { type: 'string' },
          events: { type: 'array', items: { type: 'string', default: 'a' }, default: ['a', 'b'] },
        },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        auto_start: { type: 'boolean', description: 'Start at once. Default: true.' },
        default: { type: 'string' },
        events: {
          type: 'array',
          items: { type: 'string', description: 'Default: "a".' },
          description: 'Default: ["a","b"].',
        },
      },
    });
  });

  it('finds the schemas a request body refers to, through other schemas, and no others', () => {
    const schemas = {
      CreateJob: { properties: { webhook: { $ref: '#/components/schemas/WebhookSpec' } } },
      WebhookSpec: { properties: { url: { type: 'string' } } },
      Job: { properties: { status: { type: 'string', default: 'queued' } } },
    };
    expect([...referencedSchemas(['CreateJob'], schemas)].sort()).toEqual(['CreateJob', 'WebhookSpec']);
  });
});

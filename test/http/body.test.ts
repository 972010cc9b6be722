import { describe, expect, it } from 'vitest';
import { isJsonContentType, readJsonBody } from '../../src/http/body.js';
import { HttpError } from '../../src/http/errors.js';

const post = (
  body: BodyInit | null,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) => new Request('http://localhost/v1/bulk', { method: 'POST', body, headers });

async function failure(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

function streamOf(chunks: number, size: number, pulled: { count: number }): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(controller) {
      if (pulled.count === chunks) return controller.close();
      pulled.count++;
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
}

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON', true],
    ['application/json; charset=utf-8', true],
    ['application/json;charset="UTF-8"', true],
    ['application/json; charset=latin1', false],
    ['text/json', false],
    ['application/jsonx', false],
    ['text/plain', false],
  ])('%s: %s', (value, expected) => {
    expect(isJsonContentType(value)).toBe(expected);
  });
});

describe('readJsonBody', () => {
  it('parses a JSON body, unicode included', async () => {
    expect(await readJsonBody(post('{"emails":["用户@例子.广告"]}'), 1000)).toEqual({
      emails: ['用户@例子.广告'],
    });
  });

  it('gives undefined without a body, or with an empty one', async () => {
    expect(await readJsonBody(new Request('http://localhost/', { method: 'POST' }), 10)).toBeUndefined();
    expect(await readJsonBody(post(''), 10)).toBeUndefined();
  });

  it('answers 415 for a body that is not JSON, without reading it', async () => {
    const pulled = { count: 0 };
    const request = new Request('http://localhost/', {
      method: 'POST',
      body: streamOf(10, 10, pulled),
      headers: { 'content-type': 'text/plain' },
      duplex: 'half',
    } as RequestInit);
    expect((await failure(readJsonBody(request, 1000))).code).toBe('unsupported_media_type');
    expect(pulled.count).toBeLessThanOrEqual(1);
    expect((await failure(readJsonBody(post('{}', {}), 1000))).code).toBe('unsupported_media_type');
  });

  it('answers 413 from Content-Length alone', async () => {
    const error = await failure(
      readJsonBody(post('{}', { 'content-type': 'application/json', 'content-length': '2000' }), 1000),
    );
    expect(error.code).toBe('payload_too_large');
    expect(error.message).toContain('1000 bytes');
  });

  it('answers 413 as soon as a streamed body passes the limit, and stops reading', async () => {
    const pulled = { count: 0 };
    const request = new Request('http://localhost/', {
      method: 'POST',
      body: streamOf(1000, 1024, pulled),
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect((await failure(readJsonBody(request, 10 * 1024))).code).toBe('payload_too_large');
    expect(pulled.count).toBeLessThan(20);
  });

  it('accepts a body of exactly the limit', async () => {
    expect(await readJsonBody(post(`"${'a'.repeat(98)}"`), 100)).toBe('a'.repeat(98));
  });

  it('answers 400 for malformed JSON and invalid UTF-8', async () => {
    expect((await failure(readJsonBody(post('{"emails": ['), 1000))).message).toBe(
      'the request body is not valid JSON',
    );
    expect((await failure(readJsonBody(post(new Uint8Array([0x7b, 0xff, 0x7d])), 1000))).message).toBe(
      'the request body is not valid UTF-8',
    );
    expect((await failure(readJsonBody(post('{"a":1}{"b":2}'), 1000))).code).toBe('invalid_request');
  });
});

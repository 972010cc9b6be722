import { describe, expect, it } from 'vitest';
import {
  isLightRequest,
  lightHeaders,
  lightJsonResponse,
  lightParts,
  lightRequest,
  lightText,
  type RequestSource,
} from '../../src/http/light.js';

function source(overrides: Partial<RequestSource> = {}): RequestSource & { watched: number; bodies: number } {
  const state = { watched: 0, bodies: 0 };
  const base: RequestSource = {
    method: 'POST',
    url: 'http://localhost/v1/bulk?x=1',
    target: '/v1/bulk?x=1',
    headers: lightHeaders({
      get: (name) => ({ 'content-type': 'application/json', authorization: 'Bearer k' })[name] ?? null,
      pairs: () => [
        ['Content-Type', 'application/json'],
        ['Authorization', 'Bearer k'],
      ],
    }),
    hasBody: true,
    body: () => {
      state.bodies++;
      return new Response('{"emails":["a@b.c"]}').body as ReadableStream<Uint8Array>;
    },
    watch: () => {
      state.watched++;
    },
  };
  return Object.assign(state, base, overrides);
}

describe('lightRequest', () => {
  it('is a Request whose cheap members need no undici Request', () => {
    const src = source();
    const request = lightRequest(src);
    expect(request).toBeInstanceOf(Request);
    expect(isLightRequest(request)).toBe(true);
    expect(isLightRequest(new Request('http://x/'))).toBe(false);
    expect(request.method).toBe('POST');
    expect(request.url).toBe('http://localhost/v1/bulk?x=1');
    expect(request.headers.get('Content-Type')).toBe('application/json');
    expect(request.headers.has('x-missing')).toBe(false);
    expect(request.bodyUsed).toBe(false);
    expect(src.bodies).toBe(0);
    expect(src.watched).toBe(0);
  });

  it('builds the real request for everything else: body, json(), clone(), cache', async () => {
    const src = source();
    const request = lightRequest(src);
    expect(request.cache).toBe('default');
    const copy = request.clone();
    expect(await request.json()).toEqual({ emails: ['a@b.c'] });
    expect(request.bodyUsed).toBe(true);
    expect(await copy.text()).toBe('{"emails":["a@b.c"]}');
    expect(src.bodies).toBe(1);
  });

  it('has no body without one, and makes its signal only when read', () => {
    const src = source({ method: 'GET', hasBody: false });
    const request = lightRequest(src);
    expect(request.body).toBeNull();
    expect(src.watched).toBe(0);
    const signal = request.signal;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(request.signal).toBe(signal);
    expect(src.watched).toBe(1);
  });

  it('aborts its signal when the source says the client went away', () => {
    let abort: () => void = () => undefined;
    const request = lightRequest(
      source({
        watch: (callback) => {
          abort = callback;
        },
      }),
    );
    const signal = request.signal;
    expect(signal.aborted).toBe(false);
    abort();
    expect(signal.aborted).toBe(true);
  });
});

describe('lightHeaders', () => {
  it('reads from the source, and from a real Headers once one is needed (and then changed)', () => {
    const headers = lightHeaders({
      get: (name) => (name === 'accept' ? 'text/csv' : null),
      pairs: () => [['Accept', 'text/csv']],
    });
    expect(headers).toBeInstanceOf(Headers);
    expect(headers.get('ACCEPT')).toBe('text/csv');
    const seen: string[] = [];
    headers.forEach((value, name) => {
      seen.push(`${name}=${value}`);
    });
    expect(seen).toEqual(['accept=text/csv']);
    headers.set('accept', 'application/json');
    expect(headers.get('accept')).toBe('application/json');
    expect([...(headers as unknown as Iterable<[string, string]>)]).toEqual([['accept', 'application/json']]);
  });
});

describe('lightJsonResponse', () => {
  it('is a Response that serves status and headers itself and builds the real one for its body', async () => {
    const response = lightJsonResponse(201, '{"a":"ü"}', {
      'content-type': 'application/json',
      'x-request-id': 'r',
    });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(lightText(response)).toBe('{"a":"ü"}');
    expect(lightParts(response)).toMatchObject({ status: 201, text: '{"a":"ü"}' });
    expect(await response.json()).toEqual({ a: 'ü' });
    expect(response.bodyUsed).toBe(true);
    expect(response.headers.get('x-request-id')).toBe('r');
  });

  it('stops offering its parts once its headers may have been changed', () => {
    const response = lightJsonResponse(200, '{}', { 'content-type': 'application/json' });
    expect(lightParts(response)).toBeDefined();
    response.headers.set('access-control-allow-origin', '*');
    expect(lightParts(response)).toBeUndefined();
    expect(lightText(response)).toBe('{}');
    expect(lightText(new Response('x'))).toBeUndefined();
  });
});

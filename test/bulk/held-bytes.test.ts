import { describe, expect, it } from 'vitest';
import {
  addressBytes,
  BYTES_PER_ADDRESS,
  HeldBytesLedger,
  inputBytes,
  textBytes,
} from '../../src/bulk/held-bytes.js';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import { FakeClock, instantVerifier, until } from './support.js';

describe('what an input costs', () => {
  it('counts 256 bytes an address plus two a character of the address and of its row', () => {
    expect(textBytes(10)).toBe(20);
    expect(addressBytes('a@example.com', 0)).toBe(BYTES_PER_ADDRESS + 26);
    expect(addressBytes('a@example.com', 65_536)).toBe(BYTES_PER_ADDRESS + 26 + 131_072);
    expect(inputBytes([])).toBe(0);
    expect(inputBytes(['a@example.com'], ['a@example.com,Ann'])).toBe(256 + 2 * 13 + 2 * 17);
    expect(inputBytes(['a@x.example', 'b@x.example'])).toBe(2 * (256 + 22));
    // A unicode address counts its UTF-16 code units.
    expect(inputBytes(['用户@例子.广告'])).toBe(256 + 2 * 8);
  });
});

describe('HeldBytesLedger', () => {
  it('sums bytes per owner and in all, and a release frees a job once', () => {
    const ledger = new HeldBytesLedger();
    ledger.hold('j1', 'a', 100);
    ledger.hold('j1', 'a', 50);
    ledger.hold('j2', 'b', 7);
    ledger.hold('j3', null, 3);
    expect(ledger.of('a')).toEqual({ owner: 150, total: 160 });
    expect(ledger.of('b')).toEqual({ owner: 7, total: 160 });
    expect(ledger.of(null)).toEqual({ owner: 3, total: 160 });
    expect(ledger.of('nobody')).toEqual({ owner: 0, total: 160 });
    ledger.release('j1');
    ledger.release('j1');
    ledger.release('unknown');
    expect(ledger.of('a')).toEqual({ owner: 0, total: 10 });
    // A later hold counts for the job's first owner.
    ledger.hold('j2', 'a', 1);
    expect(ledger.of('b')).toEqual({ owner: 8, total: 11 });
  });
});

describe('BulkJobManager.heldBytes', () => {
  it('counts addresses, kept rows and names as they come in, and frees them on delete', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    try {
      const wide = 'x'.repeat(60_000);
      const job = await jobs.create({ owner: 'a', name: 'wide', autoStart: false });
      expect(jobs.heldBytes({ owner: 'a' })).toEqual({ owner: 8, total: 8 });
      await jobs.add(job.id, ['  u1@d.example '], {
        owner: 'a',
        source: { columns: ['email', 'notes'], emailColumn: 0, rows: [['u1@d.example', wide]] },
      });
      // The address is counted trimmed, the row as it is kept (`u1@d.example,xxx…`).
      const row = 256 + 2 * 12 + 2 * (12 + 1 + 60_000);
      expect(jobs.heldBytes({ owner: 'a' })).toEqual({ owner: 8 + row, total: 8 + row });
      await jobs.create({ owner: 'b', emails: ['v@d.example'], autoStart: false });
      expect(jobs.heldBytes({ owner: 'b' })).toEqual({ owner: 256 + 22, total: 8 + row + 256 + 22 });
      expect(jobs.heldBytes()).toEqual({ owner: 0, total: 8 + row + 256 + 22 });
      await jobs.delete(job.id, { owner: 'a' });
      expect(jobs.heldBytes({ owner: 'a' })).toEqual({ owner: 0, total: 256 + 22 });
    } finally {
      await jobs.close();
    }
  });

  it('counts nothing for a refused add', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier(), maxAddressesPerJob: 1 });
    try {
      const job = await jobs.create({ emails: ['a@d.example'], autoStart: false });
      await expect(jobs.add(job.id, ['b@d.example'])).rejects.toMatchObject({ code: 'limit_exceeded' });
      expect(jobs.heldBytes()).toEqual({ owner: 256 + 22, total: 256 + 22 });
    } finally {
      await jobs.close();
    }
  });

  it('frees a job forgotten after its retention', async () => {
    const clock = new FakeClock();
    const jobs = new BulkJobManager({
      verifier: instantVerifier(),
      clock,
      store: memoryJobStore(),
      retentionMs: 1000,
    });
    try {
      const done = await jobs.create({ emails: ['a@x.example'] });
      await until(async () => (await jobs.get(done.id))?.status === 'complete');
      expect(jobs.heldBytes().total).toBe(256 + 22);
      clock.advance(1001);
      // The sweep (every retentionMs / 2 of real time, at least 1 s) forgets the job.
      await until(() => jobs.heldBytes().total === 0);
      expect(await jobs.get(done.id)).toBeUndefined();
    } finally {
      await jobs.close();
    }
  });
});

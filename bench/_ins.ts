import pg from 'pg';

const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
await c.connect();
await c.query('drop schema if exists mv_exp2 cascade; create schema mv_exp2');
await c.query(
  `create table mv_exp2.r1 (job_id text not null, position integer not null, status text not null, result text not null, primary key (job_id, position))`,
);
await c.query(
  `create table mv_exp2.r2 (job_id text not null, position integer not null, status text not null, result text not null, primary key (job_id, position))`,
);
await c.query(
  `create table mv_exp2.r3 (job_id text not null, position integer not null, status text not null, result text not null, primary key (job_id, position))`,
);
const id = 'b3b7c3f2-6a1e-4b8e-9a55-2f7f0b1c9d11';
const mk = (i: number) =>
  JSON.stringify({
    email: `jamal.garcia${i}@gmail.com`,
    normalized: 'jamal.garcia@gmail.com',
    user: 'jamal.garcia',
    domain: 'gmail.com',
    status: 'unknown',
    sub_status: 'smtp_not_checked',
    score: 40,
    disposable: false,
    role: false,
    free: true,
    accept_all: false,
    did_you_mean: null,
    mx_record: null,
    smtp_provider: null,
  });
const N = 10000;
const t = { a: 0, b: 0, c: 0 };
for (let round = 0; round < 20; round++) {
  const pos = Array.from({ length: N }, (_, i) => round * N + i);
  const texts = pos.map(mk);
  const args = [id, pos.join(','), pos.map(() => 'unknown').join(','), texts.join('\n')];
  for (const [k, table, conflict] of [
    ['a', 'r1', 'ON CONFLICT DO NOTHING'],
    ['b', 'r2', ''],
    ['c', 'r3', 'ON CONFLICT DO NOTHING'],
  ] as const) {
    const s = performance.now();
    await c.query('BEGIN');
    await c.query('SET LOCAL synchronous_commit = off');
    if (k === 'c') {
      await c.query(
        `INSERT INTO mv_exp2.${table} (job_id, position, status, result) SELECT $1, * FROM unnest($2::integer[], $3::text[], $4::text[]) ${conflict}`,
        [id, pos, pos.map(() => 'unknown'), texts],
      );
    } else
      await c.query(
        `INSERT INTO mv_exp2.${table} (job_id, position, status, result) SELECT $1, * FROM unnest(string_to_array($2, ',')::integer[], string_to_array($3, ','), string_to_array($4, E'\\n')) ${conflict}`,
        args,
      );
    await c.query('COMMIT');
    t[k] += performance.now() - s;
  }
}
console.log({ onConflictMsPer10k: t.a / 20, plainMsPer10k: t.b / 20, arrayParams: t.c / 20 });
await c.query('drop schema mv_exp2 cascade');
await c.end();

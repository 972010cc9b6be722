/**
 * Cold start of the `mailvet` command (issue 30): how long `mailvet verify --no-dns a@b.com` and
 * `mailvet --version` take as new processes, beside `node -e 0` (the floor: starting Node itself). Scripts call
 * `mailvet verify` once per address, so this start-up is what they pay per address. The goal: `verify` within
 * 2x `node -e 0`.
 *
 * The CLI runs compiled JavaScript, as users run it: this checkout's `src/` compiled with tsc into a temporary
 * directory (bench/compile.ts), so a stale `dist/` is never measured. `--against=<git ref>` adds the CLI of
 * that commit, compiled the same way, so that a change is measured before and after in one run.
 *
 * Each round runs every command once, one after the other (the order rotates each round, so no command always
 * goes first); two warm-up rounds fill the file cache first. Every figure is the median wall time over the
 * rounds with its min-max spread, and each ratio to `node -e 0` is taken within a round (the two processes
 * started moments apart) before its median is: the robust figure when other processes share the machine. On
 * Linux each command's CPU time (user + system, from this process's `cutime`/`cstime` in /proc/self/stat, in
 * clock ticks of 10 ms, summed over the rounds) is printed too, with its ratio to `node -e 0`'s: waiting for a
 * busy core adds wall time but no CPU time.
 *
 *   npx tsx bench/cold-start.ts [rounds, default 30] [--against=<git ref>]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildCheckout, buildRef, type Code } from './compile.js';

/** One process the benchmark starts. */
interface Command {
  readonly name: string;
  readonly args: readonly string[];
  /** Exit codes it may end with (`verify` exits 1: `a@b.com` is not a valid address). */
  readonly exits: readonly number[];
}

const ADDRESS = 'a@b.com';
const WARM_UP_ROUNDS = 2;
const FLOOR: Command = { name: 'node -e 0', args: ['-e', '0'], exits: [0] };

/** The environment of the CLI: this one without `MAILVET_*` settings, which would change what runs. */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILVET_')));

function cliCommands(code: Code, label: string): Command[] {
  const bin = join(code.dir, 'cli', 'bin.js');
  return [
    {
      name: `mailvet verify --no-dns ${ADDRESS} (${label})`,
      args: [bin, 'verify', '--no-dns', ADDRESS],
      exits: [0, 1],
    },
    { name: `mailvet --version (${label})`, args: [bin, '--version'], exits: [0] },
  ];
}

const STAT = '/proc/self/stat';
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time of this process's waited-for children so far, in milliseconds; undefined off Linux. */
function childrenCpuMs(): number | undefined {
  if (!existsSync(STAT)) return undefined;
  // Fields after the command name, which is in parentheses: cutime and cstime are the 14th and 15th.
  const stat = readFileSync(STAT, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

/** Runs `command` once and returns its wall and CPU time in milliseconds; throws if it exits unexpectedly. */
function run(command: Command): { wallMs: number; cpuMs: number | undefined } {
  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  const child = spawnSync(process.execPath, command.args, { env: ENV, encoding: 'utf8' });
  const wallMs = performance.now() - started;
  const cpuAfter = childrenCpuMs();
  if (child.status === null || !command.exits.includes(child.status)) {
    throw new Error(`${command.name} exited with ${child.status ?? child.signal}: ${child.stderr}`);
  }
  return {
    wallMs,
    cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function spread(values: readonly number[], digits: number): string {
  return `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}`;
}

function main(): void {
  const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const rounds = Number(positional[0] ?? 30);
  if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error('rounds must be a positive integer');
  const against = process.argv.find((arg) => arg.startsWith('--against='))?.slice('--against='.length);
  const made: string[] = [];
  try {
    const old = against === undefined ? undefined : buildRef(against, made); // first: a bad ref fails early
    const commands = [FLOOR, ...cliCommands(buildCheckout(made), 'this checkout')];
    if (old !== undefined && against !== undefined) commands.push(...cliCommands(old, against));
    console.log(
      `cold start, ${rounds} interleaved rounds (order rotating) after ${WARM_UP_ROUNDS} warm-up rounds, ` +
        `node ${process.version}; CLI built with tsc from this checkout${against === undefined ? '' : ` and from ${against}`}`,
    );
    const times = commands.map((): number[] => []);
    const cpu = commands.map(() => 0);
    let cpuKnown = true;
    for (let round = 0; round < WARM_UP_ROUNDS + rounds; round += 1) {
      for (let turn = 0; turn < commands.length; turn += 1) {
        const index = (round + turn) % commands.length;
        const { wallMs, cpuMs } = run(commands[index] as Command);
        if (round < WARM_UP_ROUNDS) continue;
        times[index]?.push(wallMs);
        if (cpuMs === undefined) cpuKnown = false;
        else cpu[index] = (cpu[index] ?? 0) + cpuMs;
      }
    }
    const floor = times[0] ?? [];
    const floorCpu = cpu[0] ?? 0;
    for (const [index, command] of commands.entries()) {
      const own = times[index] ?? [];
      const ratios = own.map((ms, round) => ms / (floor[round] ?? ms));
      const ratio = index === 0 ? '' : `   ${median(ratios).toFixed(2)}x node -e 0 (${spread(ratios, 2)})`;
      console.log(
        `  ${command.name.padEnd(58)} ${median(own).toFixed(1).padStart(7)} ms (${spread(own, 0)})${ratio}`,
      );
      if (!cpuKnown) continue;
      const ownCpu = cpu[index] ?? 0;
      const cpuRatio = index === 0 || floorCpu === 0 ? '' : `   ${(ownCpu / floorCpu).toFixed(2)}x node -e 0`;
      console.log(`  ${''.padEnd(58)} ${(ownCpu / rounds).toFixed(1).padStart(7)} ms CPU per run${cpuRatio}`);
    }
    const verifyRatios = (times[1] ?? []).map((ms, round) => ms / (floor[round] ?? ms));
    const goal = median(verifyRatios) <= 2 ? 'met' : 'not met';
    console.log(`goal: verify within 2x node -e 0: ${goal} (${median(verifyRatios).toFixed(2)}x)`);
    if (old !== undefined) {
      const before = times[3] ?? [];
      const change = (times[1] ?? []).map((ms, round) => ms / (before[round] ?? ms));
      console.log(`verify, this checkout / ${against}: ${median(change).toFixed(2)}x (${spread(change, 2)})`);
    }
  } finally {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `reproduce: npx tsx bench/cold-start.ts ${rounds}${against === undefined ? '' : ` --against=${against}`}`,
  );
}

main();

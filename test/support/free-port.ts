/**
 * A free TCP port on 127.0.0.1, for a server a test starts in another process (which must be told its port).
 * @module
 */
import { createServer } from 'node:net';

/** A port that was free on 127.0.0.1 a moment ago (the OS picked it; it is closed again before this resolves). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

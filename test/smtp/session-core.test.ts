import { describe, expect, it } from 'vitest';
import { answersQuit } from '../../src/smtp/session/core.js';

describe('answersQuit', () => {
  it.each([
    [221, true], // the usual goodbye
    [421, true], // the server closing: Postfix's answer to the command after its hard error limit
    [250, false], // another command's reply, shifted onto QUIT
    [550, false],
    [452, false],
    [354, false],
    [500, false],
  ])('reads %i as the reply to QUIT: %s', (code, inStep) => {
    expect(answersQuit(code)).toBe(inStep);
  });
});

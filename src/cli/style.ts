/**
 * Terminal colour, used only on a TTY and never when `NO_COLOR` is set (https://no-color.org).
 * @module
 */
import type { Status } from '../result.js';

/** Colour helpers; with colour off each returns its text unchanged. */
export interface Style {
  /** True when escape codes are written. */
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  /** Colours `text` (default: the status itself) by status: valid green, invalid red, others yellow/magenta. */
  status(status: Status, text?: string): string;
}

const STATUS_COLOUR: Readonly<Record<Status, number>> = {
  valid: 32,
  invalid: 31,
  catch_all: 33,
  unknown: 33,
  do_not_mail: 35,
};

/** Colour is on for a terminal, unless `NO_COLOR` is set to anything but the empty string or `TERM=dumb`. */
export function colourWanted(isTTY: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  return isTTY && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
}

/** Builds the style helpers, with colour on or off. */
export function createStyle(enabled: boolean): Style {
  const paint = (code: number, text: string): string => (enabled ? `\u001b[${code}m${text}\u001b[0m` : text);
  return {
    enabled,
    bold: (text) => paint(1, text),
    dim: (text) => paint(2, text),
    status: (status, text = status) => paint(STATUS_COLOUR[status], text),
  };
}

/** Removes the escape codes of {@link createStyle} (for measuring and aligning coloured text). */
export function plain(text: string): string {
  return text.replace(/\u001b\[\d+m/g, '');
}

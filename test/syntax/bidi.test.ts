import { describe, expect, it } from 'vitest';
import { satisfiesBidiRule } from '../../src/syntax/bidi.js';

describe('satisfiesBidiRule (RFC 5893 section 2)', () => {
  it('passes labels without right-to-left characters', () => {
    expect(satisfiesBidiRule('example')).toBe(true);
    expect(satisfiesBidiRule('1abc')).toBe(true); // rule 1 is only applied to bidi labels
  });

  it('accepts right-to-left labels with digits and marks', () => {
    expect(satisfiesBidiRule('שלום')).toBe(true);
    expect(satisfiesBidiRule('שלום1')).toBe(true); // rule 3: may end with EN
    expect(satisfiesBidiRule('مثال')).toBe(true);
    expect(satisfiesBidiRule('\u0628\u064e')).toBe(true); // rule 3: NSM after the last R/AL
  });

  it('rule 1: a bidi label starts with L, R or AL', () => {
    expect(satisfiesBidiRule('1שלום')).toBe(false);
    expect(satisfiesBidiRule('٣ب')).toBe(false);
  });

  it('rule 2: no L in a right-to-left label', () => {
    expect(satisfiesBidiRule('שaלום')).toBe(false);
  });

  it('rule 3: a right-to-left label ends with R, AL, EN or AN (then NSMs)', () => {
    expect(satisfiesBidiRule('שלום-')).toBe(false);
  });

  it('rule 4: EN and AN do not mix in a right-to-left label', () => {
    expect(satisfiesBidiRule('ب1٢')).toBe(false);
    expect(satisfiesBidiRule('ب12')).toBe(true);
    expect(satisfiesBidiRule('ب٢٣')).toBe(true);
  });

  it('rule 5: no R, AL or AN in a left-to-right label', () => {
    expect(satisfiesBidiRule('aשלום')).toBe(false);
    expect(satisfiesBidiRule('a٢')).toBe(false);
  });

  it('rule 6: a left-to-right label ends with L or EN (then NSMs)', () => {
    expect(satisfiesBidiRule('a\u00b7')).toBe(true); // no bidi character: rules do not apply
  });
});

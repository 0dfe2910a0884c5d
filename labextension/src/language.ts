/**
 * The Loom language for CodeMirror 6: a stream tokenizer whose op names, types, keywords,
 * enum cases and attribute names come from loom-words.json, generated from the op
 * declarations (the same source as the Pygments lexer in loom/highlight.py).
 */
import { LanguageSupport, StreamLanguage, StringStream } from '@codemirror/language';

import words from './loom-words.json';

const OPS = new Set<string>(words.ops);
const TYPES = new Set<string>(words.types);
const KEYWORDS = new Set<string>(words.keywords);
const CONSTANTS = new Set<string>(words.constants);
const ATTRIBUTES = new Set<string>(words.attributes);

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*/;
const DOTTED = /^[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+/;
const NUMBER = /^-?(?:0x[0-9a-fA-F]+|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+|inf\b|nan\b)/;
const SPECIAL_COMMENT = /^\/\/\s*(?:RUN:|ERROR@|WARNING@|NOTE@|REMARK@|====|----)/;

interface State {
  inString: boolean;
}

function word(text: string): string | null {
  if (TYPES.has(text)) {
    return 'typeName';
  }
  if (CONSTANTS.has(text)) {
    return 'atom';
  }
  if (KEYWORDS.has(text)) {
    return 'keyword';
  }
  return null;
}

function token(stream: StringStream, state: State): string | null {
  if (state.inString) {
    while (!stream.eol()) {
      const ch = stream.next();
      if (ch === '\\') {
        stream.next();
      } else if (ch === '"') {
        state.inString = false;
        break;
      }
    }
    if (stream.eol()) {
      state.inString = false;
    }
    return 'string';
  }
  if (stream.eatSpace()) {
    return null;
  }
  // the first line of a %%loom notebook cell
  if (stream.sol() && stream.match(/^%%loom\b.*/)) {
    return 'meta';
  }
  if (stream.match(SPECIAL_COMMENT)) {
    stream.skipToEnd();
    return 'meta';
  }
  if (stream.match('//')) {
    stream.skipToEnd();
    return 'comment';
  }
  if (stream.eat('"')) {
    state.inString = true;
    return token(stream, state);
  }
  if (stream.match(/^%(?:[A-Za-z_$][A-Za-z0-9_$]*(?:-[A-Za-z0-9_$]+)*|\d+)/)) {
    return 'variableName';
  }
  if (stream.match(/^@[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*/)) {
    return 'variableName.definition';
  }
  if (stream.match(/^\^(?:[A-Za-z_$][A-Za-z0-9_$]*|\d+)/)) {
    return 'labelName';
  }
  if (stream.match(/^#[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*/)) {
    return 'meta';
  }
  const dotted = stream.match(DOTTED) as RegExpMatchArray | null;
  if (dotted) {
    return OPS.has(dotted[0]) ? 'keyword' : 'variableName';
  }
  if (stream.match(NUMBER)) {
    return 'number';
  }
  const ident = stream.match(IDENT) as RegExpMatchArray | null;
  if (ident) {
    const text = ident[0];
    // `name = value` attributes (but not `==` or `=>`)
    if (ATTRIBUTES.has(text) && stream.match(/^\s*=(?![=>])/, false)) {
      return 'propertyName';
    }
    return word(text) ?? 'variableName';
  }
  if (stream.match('->') || stream.match(/^[=|]/)) {
    return 'operator';
  }
  stream.next();
  return 'punctuation';
}

export const loomLanguage = StreamLanguage.define<State>({
  name: 'loom',
  startState: () => ({ inString: false }),
  token,
  languageData: { commentTokens: { line: '//' } }
});

export function loom(): LanguageSupport {
  return new LanguageSupport(loomLanguage);
}

/** Numbers of words per class, for the browser tests and the console. */
export const wordCounts = {
  ops: OPS.size,
  types: TYPES.size,
  keywords: KEYWORDS.size,
  constants: CONSTANTS.size,
  attributes: ATTRIBUTES.size
};

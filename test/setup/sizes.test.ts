/**
 * Sizes, measured so they stay small as the code grows: no .ts file under
 * src/ or protocol/ over MAX_FILE_LINES lines and no function or method over
 * MAX_FUNCTION_LINES, unless the function says why at its head with a
 * comment line beginning "Long because" and a reason.
 *
 * Functions are read with the TypeScript compiler API: every function-like
 * node (declarations, methods, constructors, accessors, function expressions
 * and arrow functions) from its first line to its last, nested functions
 * included in the one that holds them. A failure names file:function and the
 * size, the list a split starts from.
 *
 * EXCEPTIONS names the files left as they are, each with its reason; it is
 * for what could not be split yet and should only shrink.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 60;

/** File → why its sizes are not held to the rules (yet). */
const EXCEPTIONS: Record<string, string> = {
};

/** Folders whose every file is excepted, with the reason. */
const EXCEPTED_FOLDERS: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

function exceptionFor(file: string): string | undefined {
  if (EXCEPTIONS[file] !== undefined) return EXCEPTIONS[file];
  for (const [folder, reason] of Object.entries(EXCEPTED_FOLDERS)) if (file.startsWith(folder)) return reason;
  return undefined;
}

interface Measured {
  name: string;
  lines: number;
  justified: boolean;
}

function propertyName(name: ts.PropertyName | ts.BindingName | undefined, source: ts.SourceFile): string | undefined {
  if (name === undefined) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  return name.getText(source);
}

/** The name a reader would look for: the function's own, its variable's, its property's, else its line. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  let own = ts.isConstructorDeclaration(node) ? 'constructor' : propertyName(node.name, source);
  const parent = node.parent;
  if (own === undefined) {
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
      own = propertyName(parent.name, source);
    } else if (ts.isCallExpression(parent)) {
      own = `${parent.expression.getText(source).slice(0, 40)}(…) callback`;
    }
  }
  const owner = enclosingClassName(node);
  const base = own ?? 'anonymous function';
  return `${owner ? `${owner}.` : ''}${base} (line ${line})`;
}

function enclosingClassName(node: ts.Node): string | undefined {
  const parent = node.parent;
  if (ts.isClassLike(parent) && parent.name) return parent.name.text;
  return undefined;
}

/** The nodes whose leading comments count as the head of `node`: itself up to its statement. */
function headNodes(node: ts.Node): ts.Node[] {
  const nodes = [node];
  let at = node;
  while (!ts.isSourceFile(at.parent) && !ts.isBlock(at.parent) && !ts.isClassLike(at.parent)) {
    if (ts.isObjectLiteralExpression(at.parent)) break;
    at = at.parent;
    nodes.push(at);
  }
  return nodes;
}

const LONG_BECAUSE = /^\s*(?:\/\/+|\/\*+|\*)?\s*Long because\s+\S+\s+\S+/m;

function saysWhyLong(node: ts.Node, text: string): boolean {
  for (const at of headNodes(node)) {
    for (const range of ts.getLeadingCommentRanges(text, at.getFullStart()) ?? []) {
      const comment = text.slice(range.pos, range.end);
      if (comment.split('\n').some((line) => LONG_BECAUSE.test(line))) return true;
    }
  }
  return false;
}

function measureFunctions(file: string): Measured[] {
  return measureSource(file, readFileSync(join(ROOT, file), 'utf8'));
}

function measureSource(file: string, text: string): Measured[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const measured: Measured[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      measured.push({ name: functionName(fn, source), lines: last - first + 1, justified: saysWhyLong(fn, text) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return measured;
}

function lineCount(file: string): number {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

const FILES = [...sourceFiles('protocol'), ...sourceFiles('src')];

describe('sizes of src/ and protocol/', () => {
  it('reads a few hundred files', () => {
    expect(FILES.length).toBeGreaterThan(100);
  });

  it(`has no file over ${MAX_FILE_LINES} lines outside EXCEPTIONS`, () => {
    const over = FILES.filter((f) => exceptionFor(f) === undefined)
      .map((f) => ({ file: f, lines: lineCount(f) }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .sort((a, b) => b.lines - a.lines)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(over, `files over ${MAX_FILE_LINES} lines: split them by job`).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines without "Long because ..." at its head`, () => {
    const over: { where: string; lines: number }[] = [];
    for (const file of FILES) {
      if (exceptionFor(file) !== undefined) continue;
      for (const fn of measureFunctions(file)) {
        if (fn.lines > MAX_FUNCTION_LINES && !fn.justified) over.push({ where: `${file}:${fn.name}`, lines: fn.lines });
      }
    }
    const listed = over.sort((a, b) => b.lines - a.lines).map((o) => `${o.where}: ${o.lines} lines`);
    expect(listed, `functions over ${MAX_FUNCTION_LINES} lines: split them, or write why at their head`).toEqual([]);
  });

  it('keeps EXCEPTIONS to files that exist and still break a rule', () => {
    const stale = Object.keys(EXCEPTIONS).filter((file) => {
      if (!FILES.includes(file)) return true;
      if (lineCount(file) > MAX_FILE_LINES) return false;
      return !measureFunctions(file).some((fn) => fn.lines > MAX_FUNCTION_LINES && !fn.justified);
    });
    expect(stale, 'exceptions no longer needed: remove them').toEqual([]);
  });

  it('measures a function and reads "Long because" at its head', () => {
    const sample = [
      '/** Does a thing.',
      ' *',
      ' * Long because the steps share many locals.',
      ' */',
      'export function held(): void {',
      '  return;',
      '}',
      'const arrow = (): number => {',
      '  return 1;',
      '};',
    ].join('\n');
    const fns = measureSource('sample.ts', sample);
    expect(fns).toEqual([
      { name: 'held (line 5)', lines: 3, justified: true },
      { name: 'arrow (line 8)', lines: 3, justified: false },
    ]);
  });
});

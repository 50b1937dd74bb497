// The compile errors a user of the typed API sees. test-types/ proves that wrong code does not
// compile; this proves that the error says what is wrong: it names the field the user got
// wrong, not some other field or a form of the call they did not mean.
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));
const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  noEmit: true,
  types: [],
};

const PRELUDE = `
import { createEngine, runWorker, type Coordinator } from '../src/index.js';
declare const zk: Coordinator;
interface Files {
  request: { data: { url: string }; result: { size: number } };
  download: { data: { url: string; size: number }; parent: 'request'; result: { path: string } };
  ping: { result: 'pong' };
}
const engine = createEngine<Files>(zk, { world: 'files' });
void engine; void runWorker;
`;

let oldProgram: ts.Program | undefined;

/** The messages (chains flattened) of every error in `body`, compiled after the prelude. */
function errorsOf(body: string): string[] {
  const file = `${here}snippet-${Math.random().toString(36).slice(2)}.ts`;
  const text = `${PRELUDE}\nexport async function snippet(): Promise<void> {\n${body}\n}\n`;
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) =>
    name === file ? ts.createSourceFile(name, text, lang) : getSourceFile(name, lang, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  // The previous program's sources are reused: only the snippet is checked anew.
  const program = ts.createProgram([file], options, host, oldProgram);
  oldProgram = program;
  const source = program.getSourceFile(file)!;
  return ts
    .getPreEmitDiagnostics(program, source)
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('what the compiler says about a mistake in typed code', { timeout: 120_000 }, () => {
  it('compiles the prelude without errors', () => {
    expect(errorsOf('')).toEqual([]);
  });

  it('a misspelt field next to a correct one in a task map names the misspelt field', () => {
    const [error, ...more] = errorsOf(`
      interface Misspelt { request: { data: { url: string }; reslt: number } }
      createEngine<Misspelt>(zk, { world: 'w' });`);
    expect(more).toEqual([]);
    expect(error).toMatch(/Types of property 'reslt' are incompatible/);
    expect(error).toMatch(
      /reslt: not a field of a task type \(its fields are data, result and parent\)/,
    );
  });

  it('a parent type the map does not have names the parent and the types there are', () => {
    const [error] = errorsOf(`
      interface P { request: { data: string }; download: { parent: 'reqest' } }
      createEngine<P>(zk, { world: 'w' });`);
    expect(error).toMatch(/Types of property 'parent' are incompatible/);
    expect(error).toMatch(
      /'"reqest"' is not assignable to type 'keyof P \| undefined'\. Did you mean '"request"'\?/,
    );
  });

  it("priority: 'high' in the named form of queue is reported as a wrong priority", () => {
    const errors = errorsOf(`await engine.queue({ name: 'p', type: 'ping', priority: 'high' });`);
    expect(errors).toEqual(["Type 'string' is not assignable to type 'number'."]);
  });

  it('an option in the positional form is still reported as belonging to the fourth argument', () => {
    const [error] = errorsOf(`await engine.queue({ name: 'p', type: 'ping', priority: 1 }, null);`);
    expect(error).toMatch(/'priority' does not exist in type/);
  });

  it("in a mixed queueMany array, the element with another type's data is the one reported", () => {
    const errors = errorsOf(`
      await engine.queueMany([
        { name: 'a', type: 'request', data: { url: 'x' } },
        { name: 'b', type: 'download', data: { url: 'x' } },
      ]);`);
    expect(errors).toEqual([
      expect.stringMatching(/Property 'size' is missing in type '\{ url: string; \}'/),
    ]);
  });

  it("a declared parent's result cannot be cast to another type", () => {
    const [error] = errorsOf(`
      runWorker(zk, { download: async (t) => {
        const r = await t.parentResult<{ lines: number }>();
        return { path: String(r) };
      } }, { world: 'files', engine });`);
    expect(error).toMatch(/Expected 0 type arguments, but got 1/);
  });
});

// Commands as a person types them at a terminal: `sh -c` in a process group of its own, so that a
// Ctrl-C (SIGINT to the group) or the cleanup reaches everything the command started — npm, the
// script's shell and the server — and orphans cannot outlive the test. Output is kept and waited
// on by pattern. Also: the fenced code blocks of a Markdown file, read as a reader would copy them.
import { spawn } from 'node:child_process';
import { onPath } from './postgres.ts';

const setpriv = onPath('setpriv');

export interface ShellRun {
  readonly command: string;
  /** Standard output so far. */
  stdout(): string;
  /** Standard output and error so far, interleaved as they came. */
  output(): string;
  /** The exit code (null when ended by a signal), once the command has exited. */
  readonly exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in the output (`stdout` only when asked). */
  waitFor(pattern: RegExp, options?: { timeoutMs?: number; stream?: 'stdout' | 'output' }): Promise<RegExpExecArray>;
  /** Sends a signal to the whole process group (as a terminal does on Ctrl-C with SIGINT). */
  signal(signal: NodeJS.Signals): void;
}

/**
 * Runs `command` through `sh -c` in `cwd` with exactly `env` (a user's shell, not the test
 * runner's). If the test process dies first, the group leader gets SIGTERM (setpriv's parent-death
 * signal, where setpriv exists); `stop()` of the returned set kills what is left.
 */
export function shell(command: string, options: { cwd: string; env: NodeJS.ProcessEnv }, running?: Set<ShellRun>): ShellRun {
  const argv = [...(setpriv ? [setpriv, '--pdeathsig=TERM', '--'] : []), 'sh', '-c', command];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let output = '';
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    output += d;
    changed();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    output += d;
    changed();
  });
  let done = false;
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => {
    done = true;
    running?.delete(run);
    changed();
    resolve(code);
  }));
  const pgid = child.pid!;
  const run: ShellRun = {
    command,
    stdout: () => stdout,
    output: () => output,
    exited,
    signal(signal) {
      try {
        process.kill(-pgid, signal);
      } catch {
        // the group is empty
      }
    },
    waitFor(pattern, { timeoutMs = 60_000, stream = 'output' } = {}) {
      return new Promise((resolve, reject) => {
        const text = () => (stream === 'stdout' ? stdout : output);
        const timer = setTimeout(() => finish(new Error(`\`${command}\`: no ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs);
        const finish = (result: RegExpExecArray | Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (result instanceof Error) reject(result);
          else resolve(result);
        };
        const check = () => {
          const match = pattern.exec(text());
          if (match) finish(match);
          else if (done) finish(new Error(`\`${command}\` exited without ${pattern}:\n${output}`));
        };
        listeners.add(check);
        check();
      });
    },
  };
  running?.add(run);
  return run;
}

/** Kills every command of `running` that is still going, and what it started. */
export function stopAll(running: Set<ShellRun>): void {
  for (const run of running) run.signal('SIGKILL');
}

/** Waits for a command to end: its exit code and output. */
export async function finished(run: ShellRun, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; output: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`\`${run.command}\` did not exit within ${timeoutMs} ms:\n${run.output()}`)), timeoutMs);
  });
  try {
    const code = await Promise.race([run.exited, timeout]);
    return { code, stdout: run.stdout(), output: run.output() };
  } finally {
    clearTimeout(timer);
  }
}

export interface CodeBlock {
  /** The info string after the opening fence (`sh`, `json`…), empty when there is none. */
  lang: string;
  /** The lines between the fences. */
  lines: string[];
}

/** The fenced code blocks of `markdown` (top-level and indented under list items alike). */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { indent: string; fence: string; block: CodeBlock } | undefined;
  for (const line of markdown.split('\n')) {
    const fence = /^(\s*)(```+|~~~+)\s*([^\s`]*)/.exec(line);
    if (!open) {
      if (fence) open = { indent: fence[1]!, fence: fence[2]!, block: { lang: fence[3]!, lines: [] } };
    } else if (fence && fence[2]!.startsWith(open.fence) && line.trim() === fence[2]) {
      blocks.push(open.block);
      open = undefined;
    } else {
      open.block.lines.push(line.startsWith(open.indent) ? line.slice(open.indent.length) : line.trimStart());
    }
  }
  return blocks;
}

/**
 * Splits a line of shell into its words and its comment, the way `sh` reads them: quotes ('…',
 * "…") group, and `#` starts a comment only at the start of a word outside quotes. Enough for
 * the commands of the docs; no expansion is done.
 */
export function shellWords(line: string): { words: string[]; comment: string | undefined } {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) {
      return { words, comment: line.slice(i + 1).trim() };
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} in: ${line}`);
  if (word !== undefined) words.push(word);
  return { words, comment: undefined };
}

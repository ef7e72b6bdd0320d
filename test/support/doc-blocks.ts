/**
 * The fenced code blocks of the project's Markdown docs, for the tests that keep them true
 * (test/unit/docs/): command lines that run `dreact`, and agent files in YAML.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

export interface DocBlock {
  /** Path relative to the repository. */
  file: string;
  /** 1-based line of the block's first content line. */
  line: number;
  lang: string;
  body: string;
}

/** README.md, docs/**, examples/** and deploy/** Markdown files. */
export function docFiles(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(path.join(ROOT, dir));
    } catch {
      return;
    }
    for (const name of names) {
      if (name === 'node_modules') continue;
      const rel = path.join(dir, name);
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) out.push(rel);
    }
  };
  for (const dir of ['docs', 'examples', 'deploy']) walk(dir);
  return out;
}

export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const out: DocBlock[] = [];
  let open: { lang: string; line: number; body: string[] } | undefined;
  lines.forEach((text, i) => {
    const fence = /^\s*```(\S*)\s*$/.exec(text);
    if (fence && !open) open = { lang: fence[1] ?? '', line: i + 2, body: [] };
    else if (fence && open) {
      out.push({ file, line: open.line, lang: open.lang, body: open.body.join('\n') });
      open = undefined;
    } else if (open) open.body.push(text);
  });
  return out;
}

export interface DocCommand {
  where: string;
  /** The command as written (one of a line's ` · `-separated commands). */
  text: string;
  /** Its words after `dreact`. */
  argv: string[];
}

const SHELL_LANGS = new Set(['', 'bash', 'sh', 'shell', 'console', 'zsh']);

/** Splits a command line into words: single and double quotes group, a backslash escapes. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let cur = '';
  let quote: string | undefined;
  let any = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      any = true;
    } else if (c === '\\' && i + 1 < line.length) cur += line[++i];
    else if (/\s/.test(c)) {
      if (cur || any) words.push(cur);
      cur = '';
      any = false;
    } else cur += c;
  }
  if (quote) throw new Error(`unclosed quote in: ${line}`);
  if (cur || any) words.push(cur);
  return words;
}

/** `dreact …` in inline code of the docs' prose (outside fenced blocks). */
export function docInlineCommands(): DocCommand[] {
  const out: DocCommand[] = [];
  for (const file of docFiles()) {
    let fenced = false;
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (/^\s*```/.test(text)) fenced = !fenced;
        if (fenced) return;
        for (const m of text.matchAll(/`dreact ([a-z][^`]*)`/g)) {
          const command = m[1]!.trim();
          out.push({ where: `${file}:${i + 1}`, text: `dreact ${command}`, argv: shellWords(command) });
        }
      });
  }
  return out;
}

/** Every `dreact …` command of the docs' shell blocks (comments, pipes and `&&` cut off). */
export function docCommands(): DocCommand[] {
  const out: DocCommand[] = [];
  for (const file of docFiles()) {
    for (const block of docBlocks(file)) {
      if (!SHELL_LANGS.has(block.lang)) continue;
      block.body.split('\n').forEach((raw, i) => {
        const line = raw.replace(/\s+#\s.*$/, '').trim();
        for (const part of line.split(/\s+·\s+/)) {
          const m = /^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:npx\s+)?dreact\s+([a-z].*)$/.exec(part.trim());
          if (!m) continue;
          const command = m[1]!.split(/\s+(?:&&|\||;|>|2>)\s+/)[0]!.trim();
          out.push({ where: `${file}:${block.line + i}`, text: `dreact ${command}`, argv: shellWords(command) });
        }
      });
    }
  }
  return out;
}

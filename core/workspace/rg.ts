/**
 * react.rg's search over workspace files: file names by a basename regex, contents by a line
 * regex, with context lines and caps on matches, files and bytes scanned. Each hit comes back
 * with a `react.read` item for its region. Pure.
 */

export interface RgFile {
  /** Logical path (`fi:<turn>.files/<rel>`), what react.read takes. */
  path: string;
  /** Text, or undefined for a binary file (never searched, still listed by name). */
  text: string | undefined;
  sizeBytes: number;
}

export interface RgOptions {
  nameRegex?: string;
  pattern?: string;
  contextLines: number;
  maxMatches: number;
  maxFiles: number;
  maxBytes: number;
}

export interface RgHit {
  path: string;
  line?: number;
  text?: string;
  before?: string[];
  after?: string[];
  read_item: { path: string; line_start?: number; line_count?: number };
}

export interface RgResult {
  hits: RgHit[];
  files_scanned: number;
  bytes_scanned: number;
  /** Which cap stopped the search, if any. */
  truncated?: 'max_matches' | 'max_files' | 'max_bytes';
  skipped_binary: string[];
}

/** Compiles a caller's regex with a clear error (Python-style inline flags like (?i) become flags). */
export function compileRegex(source: string, what: string): RegExp {
  let flags = '';
  let body = source;
  const inline = /^\(\?([imsx]+)\)/.exec(body);
  if (inline) {
    body = body.slice(inline[0].length);
    flags = [...new Set(inline[1]!.replace('x', ''))].join('');
  }
  try {
    return new RegExp(body, flags);
  } catch (err) {
    throw new Error(`${what}: invalid regular expression ${JSON.stringify(source)}: ${(err as Error).message}`);
  }
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

export function searchFiles(files: readonly RgFile[], opts: RgOptions): RgResult {
  const nameRe = opts.nameRegex ? compileRegex(opts.nameRegex, 'name_regex') : undefined;
  const lineRe = opts.pattern ? compileRegex(opts.pattern, 'pattern') : undefined;
  const result: RgResult = { hits: [], files_scanned: 0, bytes_scanned: 0, skipped_binary: [] };
  for (const file of files) {
    if (nameRe && !nameRe.test(basename(file.path))) continue;
    if (result.files_scanned >= opts.maxFiles) {
      result.truncated = 'max_files';
      break;
    }
    if (!lineRe) {
      result.files_scanned++;
      result.hits.push({ path: file.path, read_item: { path: file.path } });
      if (result.hits.length >= opts.maxMatches) {
        result.truncated = 'max_matches';
        break;
      }
      continue;
    }
    if (file.text === undefined) {
      result.skipped_binary.push(file.path);
      continue;
    }
    if (result.bytes_scanned + file.sizeBytes > opts.maxBytes) {
      result.truncated = 'max_bytes';
      break;
    }
    result.files_scanned++;
    result.bytes_scanned += file.sizeBytes;
    const lines = file.text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    for (let i = 0; i < lines.length; i++) {
      if (!lineRe.test(lines[i]!)) continue;
      const from = Math.max(0, i - opts.contextLines);
      const to = Math.min(lines.length, i + opts.contextLines + 1);
      result.hits.push({
        path: file.path,
        line: i + 1,
        text: lines[i]!,
        ...(opts.contextLines > 0 ? { before: lines.slice(from, i), after: lines.slice(i + 1, to) } : {}),
        read_item: { path: file.path, line_start: from + 1, line_count: to - from },
      });
      if (result.hits.length >= opts.maxMatches) {
        result.truncated = 'max_matches';
        return result;
      }
    }
  }
  return result;
}

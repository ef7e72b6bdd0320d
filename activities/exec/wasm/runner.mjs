// The wasm exec backend's sandbox process (plain JavaScript: it runs without tsx, from the sources
// or beside dist/worker.cjs). One process runs one program, then exits: a fresh interpreter state
// per call. The parent (activities/exec/wasm/pool.ts) starts it with Node's permission model (it
// may read only Pyodide's files, this file and the interpreter snapshot; no writes, no child
// processes, no worker threads, no native addons), code generation from strings disallowed, an
// empty environment and a capped JS heap. Here:
//   - wasm memory growth is capped (the program's MemoryError, not the host's swap);
//   - Python gets no bridge to JavaScript (an empty `js` module, `pyodide_js` unregistered) and
//     Emscripten's sockets lose their WebSocket transport (no network);
//   - the virtual file system (MEMFS) holds the workspace the parent sends, with a per-file and a
//     total size cap; stdout and stderr go, merged and capped, to fd 1;
//   - `dreact_tools.call` writes a request to the device /dev/dreact_tools, which this process
//     forwards synchronously over fd 3 to the parent, which forwards it to the exec's tool
//     supervisor (the same governance path as the other backends).
// Modes: `node runner.mjs snapshot <pyodide dir> <file>` writes the initialised interpreter's memory
// snapshot; `node runner.mjs run <pyodide dir> <file>` loads it, says `ready` over IPC, runs one job.
import fs, { constants as fsc } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [mode, pyodideDir, snapshotFile] = process.argv.slice(2);

const PRELOAD =
  'import ast, builtins, collections, csv, datetime, io, json, math, os, random, re, statistics, sys, traceback, types';

const BOOTSTRAP_DEF = String.raw`
def _dreact_run(env_json):
    import builtins, json, os, sys, traceback, types
    for name in ("js", "pyodide_js"):
        sys.modules.pop(name, None)
    os.environ.clear()
    os.environ.update(json.loads(env_json))
    sys.path[:0] = ["/runtime"]
    sys.argv = ["/runtime/main.py"]
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(write_through=True)
    os.chdir("/workspace/work")
    main = types.ModuleType("__main__")
    main.__file__ = "/runtime/main.py"
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    with open("/runtime/main.py", encoding="utf-8") as f:
        source = f.read()
    code = 0
    try:
        exec(compile(source, "/runtime/main.py", "exec"), main.__dict__)
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code & 0xFF
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    return code
`;
const EFBIG = 22; // Emscripten's errno numbers (ERRNO_CODES in pyodide.asm.mjs)
const ENOSPC = 51;
const EHOSTUNREACH = 23;

// Wasm memory: the cap applies from the job on (loading needs what it needs).
let memoryCap = Infinity;
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function cappedGrow(pages) {
  if (this.buffer.byteLength + pages * 65536 > memoryCap)
    throw new RangeError(`wasm memory over the ${memoryCap}-byte limit`);
  return grow.call(this, pages);
};
// Pyodide reports a fatal error with its (minified, very long) source lines: one short line each.
for (const level of ['log', 'info', 'warn', 'error']) {
  console[level] = (...args) => {
    const text = args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(' ');
    fs.writeSync(1, `${text.slice(0, 500)}\n`);
  };
}
// Node would print an uncaught error with the offending source line (a megabyte of minified code).
process.on('uncaughtException', (err) => {
  fs.writeSync(1, `wasm sandbox: ${String(err?.name ?? 'Error')}: ${String(err?.message ?? err).slice(0, 500)}\n`);
  process.exit(1);
});
// Emscripten's NODEFS reads the fs flags through process.binding, which the permission model denies.
process.binding = (name) => {
  if (name === 'constants') return { fs: fsc, os: os.constants };
  throw new Error(`process.binding(${name}) is not available in the wasm sandbox`);
};

const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, 'pyodide.mjs')).href);
const base = { indexURL: `${pyodideDir}${path.sep}`, jsglobals: Object.create(null), env: { HOME: '/tmp' } };

if (mode === 'snapshot') {
  const py = await loadPyodide({ ...base, _makeSnapshot: true });
  // What every run needs (and the modules programs use most) is imported once, into the snapshot.
  py.runPython(PRELOAD);
  py.runPython(BOOTSTRAP_DEF); // compiled once: each run only calls it
  fs.writeFileSync(snapshotFile, py.makeMemorySnapshot());
  process.exit(0);
}

const started = performance.now();
const py = await loadPyodide({ ...base, _loadSnapshot: fs.readFileSync(snapshotFile) });
const loadMs = performance.now() - started;
lockDown(py);
process.send({ type: 'ready', loadMs });
process.once('message', (job) => {
  const t0 = performance.now();
  let exitCode;
  try {
    exitCode = runJob(py, job);
  } catch (err) {
    const what =
      err instanceof Error ? err.stack : `${err?.name ?? 'error'} errno ${err?.errno}: ${JSON.stringify(err)}`;
    fs.writeSync(1, `wasm sandbox: ${what}\n`);
    exitCode = typeof err?.status === 'number' ? err.status : 1;
  }
  const outputs = collectOutputs(py.FS, '/workspace/out');
  const runMs = performance.now() - t0;
  process.send({ type: 'result', exitCode, runMs, ...outputs }, () => process.exit(0));
});
process.once('disconnect', () => process.exit(1)); // the worker went away: nothing to report to

/** No way from Python to JavaScript's globals or the host's network. */
function lockDown(pyodide) {
  pyodide.unregisterJsModule('js');
  pyodide.unregisterJsModule('pyodide_js');
  const blocked = class {
    constructor() {
      throw new pyodide.FS.ErrnoError(EHOSTUNREACH);
    }
  };
  blocked.Server = blocked;
  // Emscripten's SOCKFS opens every socket as a WebSocket from \`ws\`, which it requires from
  // pyodide.asm.mjs: that module's cached exports become a constructor that refuses.
  const req = createRequire(pathToFileURL(path.join(pyodideDir, 'pyodide.asm.mjs')));
  const ws = req.resolve('ws');
  req(ws);
  req.cache[ws].exports = blocked;
  // Pyodide's node shim (globalThis.require) hands out ws, fs and child_process: none of them.
  globalThis.require = (name) => {
    if (name === 'ws') return blocked;
    throw new Error(`require(${name}) is not available in the wasm sandbox`);
  };
  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request', 'Response'])
    delete globalThis[name];
}

function runJob(pyodide, job) {
  try {
    return runJob0(pyodide, job);
  } catch (e) {
    console.error('RUNJOB', e, new Error().stack);
    throw e;
  }
}
function runJob0(pyodide, job) {
  const { FS } = pyodide;
  memoryCap = job.limits.memoryBytes;
  capFiles(FS, job.limits);
  let logBytes = 0;
  const write = (buf) => {
    logBytes += buf.length;
    if (logBytes > job.limits.maxFileBytes) throw new FS.ErrnoError(EFBIG);
    fs.writeSync(1, buf);
    return buf.length;
  };
  pyodide.setStdout({ write });
  pyodide.setStderr({ write });
  pyodide.setStdin({ stdin: () => null });
  for (const dir of ['/workspace', '/workspace/work', '/workspace/out', '/workspace/logs', '/runtime'])
    FS.mkdirTree(dir);
  for (const f of job.files) {
    FS.mkdirTree(path.posix.dirname(f.path));
    FS.writeFile(f.path, f.bytes);
    if (f.readOnly) FS.chmod(f.path, 0o444);
  }
  FS.writeFile('/runtime/main.py', job.code);
  FS.writeFile('/runtime/dreact_tools.py', job.helper);
  FS.createDevice('/dev', 'dreact_tools', toolInput, toolOutput);
  // As in the other sandboxes: only the work, output and log folders and /tmp are writable.
  for (const dir of ['/', '/home', '/lib', '/dev', '/proc', '/workspace', '/runtime']) FS.chmod(dir, 0o555);
  for (const file of ['/runtime/main.py', '/runtime/dreact_tools.py']) FS.chmod(file, 0o444);
  // A JSON string is a Python string literal: the environment goes in as one argument.
  return pyodide.runPython(`_dreact_run(${JSON.stringify(JSON.stringify(job.env))})`);
}

/** Per-file (maxFileBytes) and total (memoryBytes) caps on what the program writes to MEMFS. */
function capFiles(FS, limits) {
  const ops = FS.filesystems.MEMFS.ops_table.file.stream;
  const write = ops.write;
  let total = 0;
  ops.write = function cappedWrite(stream, buffer, offset, length, position, canOwn) {
    const before = stream.node.usedBytes;
    const after = Math.max(before, position + length);
    if (after > limits.maxFileBytes) throw new FS.ErrnoError(EFBIG);
    if (total + after - before > limits.memoryBytes) throw new FS.ErrnoError(ENOSPC);
    const n = write.call(this, stream, buffer, offset, length, position, canOwn);
    total += stream.node.usedBytes - before;
    return n;
  };
}

// The tool bridge: bytes written to /dev/dreact_tools up to a newline are one request; the answer
// is read back from the device until its end.
let request = [];
let answer = null;
let answerAt = 0;
function toolOutput(byte) {
  if (byte === null || byte === undefined) return;
  if (byte !== 10) {
    request.push(byte);
    if (request.length > 1024 * 1024) throw new Error('tool request too large');
    return;
  }
  answer = roundTrip(Buffer.from(request));
  answerAt = 0;
  request = [];
}
function toolInput() {
  if (!answer || answerAt >= answer.length) {
    answer = null;
    return null;
  }
  return answer[answerAt++];
}
/** Sends one request line over fd 3 and blocks until the parent's answer line. */
function roundTrip(line) {
  fs.writeSync(3, Buffer.concat([line, Buffer.from('\n')]));
  const chunks = [];
  const buf = Buffer.alloc(65536);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let n;
    try {
      n = fs.readSync(3, buf, 0, buf.length, null);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
      Atomics.wait(nap, 0, 0, 5);
      continue;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    if (buf[n - 1] === 10) break;
  }
  return Buffer.concat(chunks);
}

/** The output directory's regular files (with their bytes) and what is not collected, and why. */
function collectOutputs(FS, root) {
  const files = [];
  const dropped = [];
  const walk = (dir, rel) => {
    let names;
    try {
      names = FS.readdir(dir).filter((n) => n !== '.' && n !== '..');
    } catch {
      return;
    }
    for (const name of names) {
      const full = `${dir}/${name}`;
      const relPath = rel ? `${rel}/${name}` : name;
      const st = FS.lstat(full);
      if (FS.isLink(st.mode)) dropped.push({ path: relPath, reason: 'is a symbolic link (not collected)' });
      else if (FS.isDir(st.mode)) walk(full, relPath);
      else if (!FS.isFile(st.mode)) dropped.push({ path: relPath, reason: 'not a regular file' });
      else files.push({ path: relPath, bytes: FS.readFile(full) });
    }
  };
  walk(root, '');
  return { files, dropped };
}

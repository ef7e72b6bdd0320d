/**
 * The exec backends on the real sandboxes (bubblewrap; docker with the locally built image; wasm,
 * Pyodide in a sandbox process): outputs, runtime errors, timeout, stop with no orphan, re-attach
 * after a lost worker, and the escape attempts, each blocked with evidence — the same suite for
 * every backend. Docker is skipped only when no engine answers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ExecBackend } from '../../activities/exec/backend';
import { LocalBackend, sessionMembers } from '../../activities/exec/local';
import { containerName } from '../../activities/exec/docker';
import { WasmBackend } from '../../activities/exec/wasm/backend';
import {
  LOCAL_SANDBOX,
  execScratch,
  freshBackend,
  makeSpec,
  runToEnd,
  testBackends,
  waitEnd,
  waitProgram,
  wasmSandboxGone,
  hostProcessesWith,
} from '../support/exec';
import { requiring } from '../support/requirements';

const root = execScratch('exec-backends');
const stateRoot = path.join(root, 'state');
/** A file of another conversation on the same host. */
const otherConvFile = path.join(root, 'conv-b', 'ex-other', 'out', 'secret.txt');
process.env.DREACT_TEST_SECRET = 'worker-secret-7f3a';

/** A live listener on the host's loopback (the gateway's role): reachable from the host, not from a sandbox. */
let gatewayConnections = 0;
const gateway = net.createServer((s) => {
  gatewayConnections++;
  s.end('gateway\n');
});
let gatewayPort = 0;
before(async () => {
  mkdirSync(path.dirname(otherConvFile), { recursive: true });
  writeFileSync(otherConvFile, 'other conversation data');
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  gatewayPort = (gateway.address() as net.AddressInfo).port;
});
after(() => {
  gateway.close();
  rmSync(root, { recursive: true, force: true });
});

function containerExists(backend: ExecBackend, execId: string): boolean {
  if (backend.name !== 'docker') return false;
  return (
    execFileSync('docker', ['ps', '-a', '--filter', `name=^${containerName(execId)}$`, '--format', '{{.Names}}'], {
      encoding: 'utf8',
    }).trim() !== ''
  );
}

const ESCAPES = String.raw`
import ctypes, json, os, socket, subprocess, sys
ev = {}
def attempt(name, fn):
    try:
        ev[name] = "ALLOWED: " + repr(fn())[:200]
    except BaseException as e:
        ev[name] = "blocked: %s: %s" % (type(e).__name__, e)
def connect(port):
    s = socket.socket(); s.settimeout(2); s.connect(("127.0.0.1", port)); return "connected"
attempt("postgres_socket", lambda: connect(5432))
attempt("gateway_socket", lambda: connect(GATEWAY_PORT))
attempt("dns_socket", lambda: socket.create_connection(("deb.debian.org", 80), timeout=2))
attempt("etc_shadow", lambda: open("/etc/shadow").read())
def environs():
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                found.append(open("/proc/%s/environ" % pid, "rb").read())
            except Exception:
                pass
    blob = b"\n".join(found)
    if b"worker-secret-7f3a" in blob or b"DATABASE_URL" in blob:
        return "SECRET SEEN"
    raise PermissionError("no secret in any readable environ (%d readable)" % len(found))
attempt("worker_environ", environs)
attempt("parent_environ", lambda: open("/proc/%d/environ" % WORKER_PID).read())
attempt("own_env_secret", lambda: (_ for _ in ()).throw(PermissionError("absent")) if "DREACT_TEST_SECRET" not in os.environ and "DATABASE_URL" not in os.environ else os.environ["DREACT_TEST_SECRET"])
for target in ["/usr/evil", "/evil", "/workspace/evil", "/runtime/evil", "/proc/evil", HOST_ROOT + "/evil"]:
    attempt("write " + target, lambda t=target: open(t, "w").write("x"))
attempt("read_other_conversation", lambda: open(OTHER_FILE).read())
def via_symlink():
    os.symlink(OTHER_FILE, "link_out")
    return open("link_out").read()
attempt("symlink_out_of_work", via_symlink)
os.symlink(OTHER_FILE, os.path.join(os.environ["OUTPUT_DIR"], "leak.txt"))
attempt("signal_worker", lambda: os.kill(WORKER_PID, 9))
libc = ctypes.CDLL(None, use_errno=True)
def ptrace(pid):
    r = libc.ptrace(16, pid, None, None)
    if r != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r
attempt("ptrace_worker", lambda: ptrace(WORKER_PID))
attempt("ptrace_init", lambda: ptrace(1))
attempt("setuid_root", lambda: os.setuid(0) if os.getuid() != 0 else (_ for _ in ()).throw(PermissionError("uid 0 of the wasm sandbox: no host user")))
# Python's bridges to JavaScript (Pyodide): the host's globals, eval, fetch.
attempt("js_globals", lambda: __import__("js").process.env)
attempt("pyodide_js", lambda: __import__("pyodide_js")._module)
attempt("run_js", lambda: __import__("pyodide.code").code.run_js("process.env"))
attempt("open_url", lambda: __import__("pyodide.http").http.open_url("http://127.0.0.1:%d/" % GATEWAY_PORT).read())
ev["uid"] = os.getuid()
ev["visible_pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
json.dump(ev, open(os.path.join(os.environ["OUTPUT_DIR"], "evidence.json"), "w"), indent=1)
print("done")
`;

function escapes(): string {
  return `GATEWAY_PORT = ${gatewayPort}\nWORKER_PID = ${process.pid}\nOTHER_FILE = ${JSON.stringify(otherConvFile)}\nHOST_ROOT = ${JSON.stringify(root)}\n${ESCAPES}`;
}

const backends = testBackends(stateRoot);

for (const { backend, skip } of backends) {
  describe(`exec backend ${backend.name}`, { ...(skip ? { skip } : {}) }, () => {
    test('contracted outputs come back; the program runs as nobody in the work dir', async () => {
      const spec = makeSpec(
        root,
        'import os\nprint("uid", os.getuid(), os.getcwd())\nopen(os.path.join(os.environ["OUTPUT_DIR"], "r.csv"), "w").write("a,b\\n1,2\\n")\nos.makedirs(os.environ["OUTPUT_DIR"] + "/sub")\nopen(os.environ["OUTPUT_DIR"] + "/sub/x.md", "w").write("# x")\n',
      );
      const c = await runToEnd(backend, spec);
      assert.equal(c.status.state, 'exited');
      assert.equal(c.status.exitCode, 0);
      // The wasm sandbox has no host user (its uid is Emscripten's 0); the program's folders are the same.
      assert.match(c.logTail, backend.name === 'wasm' ? /uid 0 \/workspace\/work/ : /uid 65534 \/workspace\/work/);
      assert.deepEqual(c.outputFiles, [
        { path: 'r.csv', sizeBytes: 8 },
        { path: 'sub/x.md', sizeBytes: 3 },
      ]);
      assert.equal(containerExists(backend, spec.execId), false, 'container removed after collect');
    });

    test('runtime error: exit code and traceback in the log tail', async () => {
      const c = await runToEnd(backend, makeSpec(root, 'print("before")\nraise ValueError("boom 42")\n'));
      assert.equal(c.status.state, 'exited');
      assert.equal(c.status.exitCode, 1);
      assert.match(c.logTail, /before/);
      assert.match(c.logTail, /Traceback \(most recent call last\):[\s\S]*ValueError: boom 42/);
    });

    test('timeout kills the sandbox and everything in it', async () => {
      const marker = `61.${Date.now() % 100000}`;
      const spec = makeSpec(
        root,
        `import subprocess\ntry:\n    subprocess.Popen(["sleep", "${marker}"])\nexcept OSError:\n    pass\nwhile True:\n    pass\n`,
        { wallTimeMs: 1500 },
      );
      const t0 = Date.now();
      const c = await runToEnd(backend, spec);
      assert.equal(c.status.state, 'timed_out', JSON.stringify(c.status));
      assert.ok(Date.now() - t0 < 15_000);
      assert.deepEqual(hostProcessesWith(marker), [], 'no process of the exec survives');
    });

    test('stop (steer) kills a running exec: no orphan process or container', async () => {
      const marker = `62.${Date.now() % 100000}`;
      const spec = makeSpec(
        root,
        `import subprocess, time\ntry:\n    subprocess.Popen(["sleep", "${marker}"], start_new_session=True)\nexcept OSError:\n    pass\nprint("started", flush=True)\ntime.sleep(60)\n`,
      );
      const handle = await backend.start(spec);
      await waitProgram(backend, handle, marker, 'started');
      await backend.stop(handle, 'steer: the user changed course');
      await waitEnd(backend, handle, 15_000);
      const s = await backend.status(handle);
      assert.equal(s.state, 'killed');
      assert.match(s.reason ?? '', /steer/);
      for (let i = 0; i < 40 && hostProcessesWith(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(hostProcessesWith(marker), []);
      if (backend.name === 'wasm') assert.ok(wasmSandboxGone(handle), 'the sandbox process is gone');
      await backend.collect(handle, spec);
      assert.equal(containerExists(backend, spec.execId), false);
      await backend.stop(handle, 'again'); // idempotent
    });

    test('re-attach after a lost worker: a new backend instance finds the exec; it ran once', async () => {
      const spec = makeSpec(
        root,
        'import os, time\ntime.sleep(1)\nopen(os.path.join(os.environ["OUTPUT_DIR"], "runs.txt"), "a").write("run\\n")\n',
      );
      const first = await backend.start(spec);
      const fresh = freshBackend(backend, stateRoot);
      const found = await fresh.find(spec);
      assert.deepEqual(found, first);
      const again = await fresh.start(spec); // a retried launch never starts a second one
      assert.deepEqual(again, first);
      await waitEnd(fresh, again);
      const c = await fresh.collect(again, spec);
      assert.equal(c.status.exitCode, 0);
      assert.equal(readFileSync(path.join(spec.outputDir, 'runs.txt'), 'utf8'), 'run\n');
      const twice = await fresh.collect(again, spec); // a retried collect sees the same end
      assert.equal(twice.status.state, 'exited');
      assert.deepEqual(await fresh.find(spec), first, 'still found after collect: never relaunched');
    });

    test('escape attempts are blocked (network, secrets, writes, symlinks, other conversations, ptrace)', async () => {
      const spec = makeSpec(root, escapes());
      const seenBefore = gatewayConnections;
      const c = await runToEnd(backend, spec);
      assert.equal(c.status.exitCode, 0, c.logTail);
      const ev = JSON.parse(readFileSync(path.join(spec.outputDir, 'evidence.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      for (const [name, result] of Object.entries(ev)) {
        if (name === 'uid' || name === 'visible_pids') continue;
        assert.match(String(result), /^blocked: /, `${name}: ${String(result)}`);
      }
      // Both listen on the host's loopback (Postgres, and the gateway stand-in); neither is reachable.
      const unreachable = /Connection refused|Network is unreachable|Host is unreachable|timed out/;
      assert.match(String(ev.postgres_socket), unreachable);
      assert.match(String(ev.gateway_socket), unreachable);
      assert.equal(gatewayConnections, seenBefore, 'the loopback listener saw no connection from the sandbox');
      // …while the host reaches it.
      const hello = await new Promise<string>((resolve, reject) => {
        let got = '';
        const c = net.connect(gatewayPort, '127.0.0.1');
        c.setEncoding('utf8');
        c.on('data', (d: string) => (got += d));
        c.once('close', () => resolve(got));
        c.once('error', reject);
      });
      assert.equal(hello, 'gateway\n');
      assert.match(String(ev.etc_shadow), /FileNotFoundError|PermissionError/);
      // The wasm sandbox's file system has no /usr at all (and its / is read-only: 'write /evil').
      assert.match(
        String(ev['write /usr/evil']),
        backend.name === 'wasm' ? /No such file or directory/ : /Read-only file system|Permission denied/,
      );
      assert.equal(ev.uid, backend.name === 'wasm' ? 0 : 65534);
      assert.ok(
        !(ev.visible_pids as number[]).includes(process.pid) || backend.name === 'docker',
        'the worker pid is not visible',
      );
      assert.ok(
        (ev.visible_pids as number[]).length < 10,
        `only the sandbox's own processes are visible: ${JSON.stringify(ev.visible_pids)}`,
      );
      assert.equal(existsSync(path.join(root, 'evil')), false);
      // The collector never follows the symlink the program left in OUTPUT_DIR.
      assert.deepEqual(
        c.dropped.find((d) => d.path === 'leak.txt'),
        { path: 'leak.txt', reason: 'is a symbolic link (not collected)' },
      );
      assert.ok(!c.outputFiles.some((f) => f.path === 'leak.txt'));
    });

    test('fork bomb is capped by the process limit', async () => {
      const code =
        'import os, time\nn = 0\nerr = None\ntry:\n    for i in range(5000):\n        if os.fork() == 0:\n            time.sleep(3)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    err = repr(e)\nprint("forked", n, "then", err)\n';
      const c = await runToEnd(backend, makeSpec(root, code, { maxProcesses: 32, wallTimeMs: 15_000 }));
      const m = /forked (\d+) then (.*)/.exec(c.logTail);
      assert.ok(m, c.logTail);
      assert.ok(Number(m[1]) < 32, `forks capped: ${m[1]}`);
      // The wasm sandbox has no processes at all.
      assert.match(m[2]!, /BlockingIOError|Resource temporarily unavailable|Function not implemented/);
    });

    test('thread bomb is capped by the process limit', async () => {
      const code =
        'import threading, time\nn = 0\nerr = None\ntry:\n    for i in range(5000):\n        threading.Thread(target=time.sleep, args=(3,), daemon=True).start()\n        n += 1\nexcept RuntimeError as e:\n    err = repr(e)\nprint("threads", n, "then", err)\n';
      const c = await runToEnd(backend, makeSpec(root, code, { maxProcesses: 32, wallTimeMs: 15_000 }));
      const m = /threads (\d+) then (.*)/.exec(c.logTail);
      assert.ok(m, c.logTail);
      assert.ok(Number(m[1]) < 32, `threads capped: ${m[1]}`);
      assert.match(m[2]!, /can't start new thread/);
    });

    test('memory bomb is stopped by the memory limit', async () => {
      const code =
        'blocks = []\nfor i in range(64):\n    blocks.append(b"x" * (64 * 1024 * 1024))\n    print("allocated", (i + 1) * 64, "MB", flush=True)\nprint("ALL ALLOCATED")\n';
      const c = await runToEnd(backend, makeSpec(root, code, { memoryBytes: 256 * 1024 * 1024 }));
      assert.doesNotMatch(c.logTail, /ALL ALLOCATED/);
      const last = [...c.logTail.matchAll(/allocated (\d+) MB/g)].pop();
      assert.ok(!last || Number(last[1]) <= 256, `allocated at most the limit: ${last?.[1]}`);
      assert.ok(
        /MemoryError/.test(c.logTail) || c.status.exitCode === 137 || /out of memory/.test(c.status.reason ?? ''),
        JSON.stringify(c.status) + c.logTail.slice(-300),
      );
    });

    test('huge stdout: the log kept is bounded and the worker is unaffected', async () => {
      const code =
        'import sys\nline = "y" * 1023 + "\\n"\nfor i in range(200000):\n    sys.stdout.write(line)\nprint("END OF FLOOD")\n';
      const spec = makeSpec(root, code, { maxFileBytes: 4 * 1024 * 1024, maxLogBytes: 8 * 1024, wallTimeMs: 20_000 });
      const c = await runToEnd(backend, spec);
      assert.ok(Buffer.byteLength(c.logTail) <= 8 * 1024, `tail ${Buffer.byteLength(c.logTail)} bytes`);
      if (backend.name === 'local' || backend.name === 'wasm') {
        // 200 MB never reach the disk: the file-size limit makes the write fail (EFBIG) and the program ends.
        assert.notEqual(c.status.exitCode, 0, JSON.stringify(c.status));
        assert.doesNotMatch(c.logTail, /END OF FLOOD/);
        assert.ok(statSync(path.join(stateRoot, spec.execId, 'user.log')).size <= 4 * 1024 * 1024);
      }
    });

    const noProcesses =
      backend.name === 'wasm' && 'no processes in the wasm sandbox (the fork bomb test shows os.fork refused)';
    test('a process started by the program does not outlive the exec', { skip: noProcesses }, async () => {
      const marker = `63.${Date.now() % 100000}`;
      const code = `import os, subprocess\nif os.fork() == 0:\n    os.setsid()\n    subprocess.Popen(["sleep", "${marker}"], start_new_session=True)\n    os._exit(0)\nprint("parent exits")\n`;
      const c = await runToEnd(backend, makeSpec(root, code));
      assert.equal(c.status.exitCode, 0);
      for (let i = 0; i < 40 && hostProcessesWith(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(hostProcessesWith(marker), []);
    });
  });
}

test('local: without bubblewrap the backend refuses with a clear error (unless DREACT_EXEC_UNSAFE_LOCAL=1)', async () => {
  const b = new LocalBackend({ stateRoot, bwrapPath: '/nonexistent/bwrap', unsafe: false });
  await assert.rejects(
    b.start(makeSpec(root, 'print(1)')),
    (err: Error & { type?: string; nonRetryable?: boolean }) => {
      assert.match(err.message, /bubblewrap .* is not installed.*DREACT_EXEC_UNSAFE_LOCAL=1/);
      assert.equal(err.type, 'ExecRefused');
      assert.equal(err.nonRetryable, true);
      return true;
    },
  );
  const unsafe = new LocalBackend({ stateRoot, bwrapPath: '/nonexistent/bwrap', unsafe: true });
  const c = await runToEnd(
    unsafe,
    makeSpec(root, 'import os\nprint("unsafe ran", "DREACT_TEST_SECRET" in os.environ)\n'),
  );
  assert.match(c.logTail, /unsafe ran False/);
});

requiring(test, LOCAL_SANDBOX)('local: stop leaves no process in the wrapper session', async () => {
  const b = new LocalBackend({ stateRoot });
  const spec = makeSpec(root, 'import time\ntime.sleep(30)\n');
  const h = await b.start(spec);
  await new Promise((r) => setTimeout(r, 300));
  const pid = Number(readFileSync(path.join(h.ref, 'pid'), 'utf8').split(' ')[0]);
  assert.ok((await sessionMembers(pid)).length >= 2);
  await b.stop(h, 'test');
  assert.deepEqual(await sessionMembers(pid), []);
});

describe('exec backend wasm: its own ways out', () => {
  const wasm = new WasmBackend({ stateRoot });
  after(() => wasm.pool.close());

  test('JavaScript from Python (ctypes → emscripten_run_script) is refused: the sandbox dies, the host is untouched', async () => {
    const marker = path.join(root, 'js-escape.txt');
    const js = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); require('net').connect(${gatewayPort}, '127.0.0.1')`;
    const code = `import ctypes\nprint("trying", flush=True)\nctypes.CDLL(None).emscripten_run_script(${JSON.stringify(js)}.encode())\nprint("JS RAN")\n`;
    const before = gatewayConnections;
    const c = await runToEnd(wasm, makeSpec(root, code));
    assert.match(c.logTail, /trying/);
    assert.doesNotMatch(c.logTail, /JS RAN/);
    assert.match(c.logTail, /Code generation from strings disallowed/);
    assert.notEqual(c.status.exitCode, 0);
    assert.equal(existsSync(marker), false, 'no host file written');
    assert.equal(gatewayConnections, before, 'no connection to the loopback listener');
  });

  test('a program over its wall time is killed and reported timed_out; the next call runs in a fresh interpreter', async () => {
    const t0 = Date.now();
    const c = await runToEnd(
      wasm,
      makeSpec(root, 'x = 41\nprint("spinning", flush=True)\nwhile True:\n    x += 1\n', { wallTimeMs: 1500 }),
    );
    assert.equal(c.status.state, 'timed_out', JSON.stringify(c.status));
    assert.match(c.logTail, /spinning/);
    assert.ok(Date.now() - t0 < 60_000);
    const next = await runToEnd(wasm, makeSpec(root, 'print("x" in globals(), "__main__" == __name__)\n'));
    assert.equal(next.logTail, 'False True\n');
  });
});

requiring(describe, LOCAL_SANDBOX)('wasm and bubblewrap: the same program, the same results', () => {
  const wasm = new WasmBackend({ stateRoot });
  const local = new LocalBackend({ stateRoot });
  after(() => wasm.pool.close());

  test('outputs, log and exit code are identical', async () => {
    const program = String.raw`
import csv, json, math, os, statistics, sys, datetime, hashlib, re, collections, pathlib
rows = [line.split(",") for line in open("files/data.csv").read().split("\n")[1:] if line]
values = [float(v) for _, v in rows]
out = pathlib.Path(os.environ["OUTPUT_DIR"])
with open(out / "stats.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["name", "value", "sqrt"])
    for name, v in rows:
        w.writerow([name, v, "%.6f" % math.sqrt(float(v))])
(out / "charts").mkdir()
summary = {"n": len(values), "mean": statistics.mean(values), "stdev": round(statistics.stdev(values), 9),
           "sha": hashlib.sha256(open("files/data.csv", "rb").read()).hexdigest(),
           "day": datetime.date(2026, 12, 2).isoformat(), "words": collections.Counter(re.findall(r"[a-z]+", "a b a c")).most_common(2)}
(out / "charts" / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
print("cwd", os.getcwd(), "out", os.environ["OUTPUT_DIR"], "files", sorted(os.listdir("files")))
print("env", sorted(k for k in os.environ if k not in ("PWD", "SHLVL", "_")))
print("stderr line", file=sys.stderr)
sys.exit(3)
`;
    const results = [];
    for (const backend of [local, wasm]) {
      const spec = makeSpec(root, program);
      mkdirSync(path.join(spec.workDir, 'files'), { recursive: true });
      writeFileSync(path.join(spec.workDir, 'files', 'data.csv'), 'name,value\nalpha,4\nbeta,9\ngamma,2.25\n');
      const c = await runToEnd(backend, spec);
      const bytes = c.outputFiles.map((f) => readFileSync(path.join(spec.outputDir, f.path), 'utf8'));
      results.push({ exitCode: c.status.exitCode, state: c.status.state, log: c.logTail, files: c.outputFiles, bytes });
    }
    const [fromLocal, fromWasm] = results;
    assert.equal(fromLocal!.exitCode, 3, fromLocal!.log);
    assert.deepEqual(fromWasm, fromLocal);
  });
});

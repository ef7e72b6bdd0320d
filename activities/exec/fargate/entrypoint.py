#!/usr/bin/env python3
"""Executor entrypoint of a Fargate exec task.

The task holds no credentials: everything it reads or writes is a presigned S3 URL. Its only
input is DREACT_JOB_URL (a presigned GET of the job manifest, so the RunTask overrides stay a few
hundred bytes however large the workspace). The manifest names:
  code       presigned GET of the program
  inputs     [{path, url, size}] presigned GETs of the workspace files
  slots      presigned PUTs for output files, a fixed, bounded set (one per allowed file)
  log        presigned PUT for the tail of the program's combined stdout/stderr
  result     presigned PUT for result.json (written last: its presence means the run is complete)
  limits     wallTimeMs, memoryBytes, maxFileBytes, maxOutputFiles, maxOutputBytes, maxLogBytes

The program runs with the materialised workspace as its working directory and OUTPUT_DIR set, as in
the original runtime. The entrypoint exits with the program's exit code, or 124 when it killed the
program at its wall-time limit, or 125 when the infrastructure failed (details in result.json).
"""
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone

TIMEOUT_EXIT = 124
INFRA_EXIT = 125
HTTP_TIMEOUT = 60


def now_iso():
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def http_get(url):
    with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=HTTP_TIMEOUT) as r:
        return r.read()


def http_put(url, data):
    req = urllib.request.Request(url, data=data, method="PUT", headers={"Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as r:
        r.read()


def safe_join(root, rel):
    if not rel or rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in rel.split("/")):
        raise ValueError("unsafe workspace path %r" % rel)
    return os.path.join(root, *rel.split("/"))


def limit_child(limits):
    def apply():
        os.setsid()
        mem = int(limits.get("memoryBytes") or 0)
        if mem > 0:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        fsize = int(limits.get("maxFileBytes") or 0)
        if fsize > 0:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def tail(path, max_bytes):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if size > max_bytes:
            f.seek(size - max_bytes)
        return f.read()


def collect_outputs(out_dir, slots, limits):
    """Uploads regular files under out_dir into the slots, within the caps; the rest is dropped."""
    max_files = min(len(slots), int(limits["maxOutputFiles"]))
    max_bytes = int(limits["maxOutputBytes"])
    files, dropped, total = [], [], 0
    for root, dirs, names in os.walk(out_dir, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, out_dir).replace(os.sep, "/")
            if os.path.islink(full) or not os.path.isfile(full):
                dropped.append({"path": rel, "reason": "not a regular file"})
                continue
            size = os.path.getsize(full)
            if len(files) >= max_files:
                dropped.append({"path": rel, "reason": "over the output file cap (%d)" % max_files})
                continue
            if total + size > max_bytes:
                dropped.append({"path": rel, "reason": "over the output byte cap (%d)" % max_bytes})
                continue
            with open(full, "rb") as f:
                http_put(slots[len(files)], f.read())
            files.append({"slot": len(files), "path": rel, "size": size})
            total += size
    return files, dropped


def main():
    job_url = os.environ.get("DREACT_JOB_URL")
    if not job_url:
        print("DREACT_JOB_URL is not set", file=sys.stderr)
        return INFRA_EXIT
    try:
        job = json.loads(http_get(job_url))
    except Exception as err:  # nowhere to report but the container log: ECS keeps the exit code
        print("cannot read the job manifest: %s: %s" % (type(err).__name__, err), file=sys.stderr)
        return INFRA_EXIT
    limits = job["limits"]
    result = {"execId": job["execId"], "exitCode": None, "timedOut": False, "files": [], "dropped": [], "infraErrors": []}
    base = tempfile.mkdtemp(prefix="dreact-exec-")
    work, out, logs = (os.path.join(base, d) for d in ("work", "out", "logs"))
    for d in (work, out, logs):
        os.makedirs(d)
    log_path = os.path.join(logs, "user.log")
    open(log_path, "wb").close()
    code = INFRA_EXIT
    try:
        for item in job["inputs"]:
            target = safe_join(work, item["path"])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(http_get(item["url"]))
        program = os.path.join(base, "main.py")
        with open(program, "wb") as f:
            f.write(http_get(job["code"]))
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work, "OUTPUT_DIR": out, "WORKDIR": work, "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8"}
        result["startedAt"] = now_iso()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, program], cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=limit_child(limits))

            def forward(signum, _frame):
                # StopTask sends SIGTERM to the entrypoint: pass it to the program's process group, then
                # upload what exists. The group may already be gone (the program exited meanwhile).
                if proc.poll() is None:
                    os.killpg(proc.pid, signum)

            signal.signal(signal.SIGTERM, forward)
            try:
                code = proc.wait(timeout=limits["wallTimeMs"] / 1000)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                result["timedOut"] = True
                code = TIMEOUT_EXIT
        result["endedAt"] = now_iso()
        result["exitCode"] = code if code >= 0 else 128 - code
        code = result["exitCode"]
        result["files"], result["dropped"] = collect_outputs(out, job["slots"], limits)
    except Exception as err:  # reported in result.json, never swallowed
        result["infraErrors"].append("%s: %s" % (type(err).__name__, err))
        code = INFRA_EXIT
    http_put(job["log"], tail(log_path, int(limits["maxLogBytes"])))
    http_put(job["result"], json.dumps(result).encode())
    return code


if __name__ == "__main__":
    sys.exit(main())

"""Tool proxy helper inside the exec sandbox.

    import dreact_tools
    result = dreact_tools.call("react.read", {"paths": ["fi:<turn>.files/notes.md"]})
    # -> {"ok": True, "text": "..."}

Sends one JSON request over the supervisor's Unix socket (the only way out of the sandbox) and
returns the supervisor's answer. The supervisor runs only the tools it offers — the turn's agent's
read-only built-ins (react.read, web_search, web_fetch, …), its own tools and its MCP tools
(mcp.<server>.<tool>), checked against their declarations — and records each call in the
conversation's timeline.
"""
import json
import os
import socket
import time

_MAX_RESPONSE = 8 * 1024 * 1024


class ToolProxyError(RuntimeError):
    pass


def _connect(path, wait_s):
    deadline = time.monotonic() + wait_s
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            if time.monotonic() >= deadline:
                raise ToolProxyError("the tool supervisor is not reachable at %s" % path)
            time.sleep(0.1)


def call(tool_id, params=None, timeout_s=120.0):
    """Runs one allowed tool through the supervisor; returns {"ok": bool, "text": str}."""
    path = os.environ.get("DREACT_SUPERVISOR_SOCKET")
    if not path:
        raise ToolProxyError("no tool supervisor for this exec (DREACT_SUPERVISOR_SOCKET is not set)")
    s = _connect(path, 30.0)
    try:
        s.settimeout(timeout_s)
        s.sendall((json.dumps({"tool_id": tool_id, "params": params or {}}) + "\n").encode("utf-8"))
        chunks = []
        size = 0
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX_RESPONSE:
                raise ToolProxyError("tool response over %d bytes" % _MAX_RESPONSE)
            if chunk.endswith(b"\n"):
                break
    finally:
        s.close()
    raw = b"".join(chunks).decode("utf-8").strip()
    if not raw:
        raise ToolProxyError("the tool supervisor closed the connection without an answer")
    answer = json.loads(raw)
    if "error" in answer and not answer.get("ok"):
        raise ToolProxyError(answer["error"])
    return answer

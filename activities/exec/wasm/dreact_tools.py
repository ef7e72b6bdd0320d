"""Tool proxy helper inside the wasm exec sandbox (Pyodide).

    import dreact_tools
    result = dreact_tools.call("react.read", {"paths": ["fi:<turn>.files/notes.md"]})
    # -> {"ok": True, "text": "..."}

The same call as in the other sandboxes, over another transport: the request is written to the
device /dev/dreact_tools, which the sandbox process forwards to the worker, which hands it to the
exec's tool supervisor (the one governance path: only the tools it offers, checked against their
declarations, each call recorded in the conversation's timeline). There is no other way out.
"""
import json
import os

_DEVICE = "/dev/dreact_tools"


class ToolProxyError(RuntimeError):
    pass


def call(tool_id, params=None, timeout_s=120.0):
    """Runs one allowed tool through the supervisor; returns {"ok": bool, "text": str}."""
    if not os.environ.get("DREACT_SUPERVISOR_SOCKET"):
        raise ToolProxyError("no tool supervisor for this exec (DREACT_SUPERVISOR_SOCKET is not set)")
    request = json.dumps({"tool_id": tool_id, "params": params or {}}).encode("utf-8") + b"\n"
    with open(_DEVICE, "r+b", buffering=0) as device:
        device.write(request)
        raw = device.readall().decode("utf-8").strip()
    if not raw:
        raise ToolProxyError("the tool supervisor closed the connection without an answer")
    answer = json.loads(raw)
    if "error" in answer and not answer.get("ok"):
        raise ToolProxyError(answer["error"])
    return answer

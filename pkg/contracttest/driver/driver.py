# The Python contract driver: reads scenarios as JSON on stdin, runs each one
# through the generated client (load_client or create_client, then the
# operation functions) and prints the results. The Go and TypeScript drivers
# speak the same protocol.
import json
import sys
import traceback
from urllib.parse import urlsplit

sys.path.insert(0, sys.argv[1])
import domeclient as c  # noqa: E402

inp = json.load(sys.stdin)
mock = urlsplit(inp["mock"])


def to_err(e):
    if isinstance(e, c.DomeError):
        return {"code": e.code, "message": e.detail, "retryable": e.retryable}
    return {"code": "driver_error", "message": "".join(traceback.format_exception(e)), "retryable": False}


class Reroute(c.StdlibTransport):
    def __init__(self, state):
        super().__init__()
        self.state = state

    def send(self, method, url, headers, body, timeout):
        u = urlsplit(url)
        url = u._replace(scheme=mock.scheme, netloc=mock.netloc).geturl()
        headers = dict(headers)
        headers["X-Dome-Case"] = self.state["key"]
        return super().send(method, url, headers, body, timeout)


def run(s):
    out = {"name": s["name"], "steps": []}
    state = {"now": 1700000000.0, "key": ""}
    config = dict(
        base_url=s.get("base_url") or None,
        credentials=s.get("credentials") or {},
        headers=s.get("headers") or {},
        transport=Reroute(state),
        clock=lambda: state["now"],
        sleep=lambda d: None,
    )
    try:
        if s.get("load"):
            client = c.load_client(
                dir=s.get("dir") or None, tool=s.get("tool"), profile=s.get("profile"), client_artifact_hash=s.get("artifact_hash") or None, **config
            )
        else:
            client = c.create_client(**config)
    except Exception as e:  # noqa: BLE001
        out["error"] = to_err(e)
        return out
    for i, st in enumerate(s["steps"]):
        state["now"] += (st.get("advance_ms") or 0) / 1000.0
        state["key"] = "%s#%d" % (s["name"], i)
        for _ in range(max(1, st.get("repeat") or 0)):
            r = {"status": 0}
            try:
                fn = getattr(c, st["py"]["fn"])
                res = fn(client, *st["py"]["args"], **st["py"]["kwargs"])
                r["status"] = res.status
                if res.body not in (b"", "", None):
                    r["body"] = res.body if not isinstance(res.body, bytes) else res.body.decode("utf-8", "replace")
                eo = res.error()
                if eo is not None:
                    r["error_of"] = {"code": eo.code, "retryable": eo.retryable}
            except Exception as e:  # noqa: BLE001
                r["error"] = to_err(e)
            out["steps"].append(r)
    return out


result = {"hosts": [], "urls": [], "scenarios": []}
for h in inp["vectors"].get("hosts") or []:
    result["hosts"].append(c.runtime.check_allow_host(h))
for u in inp["vectors"].get("urls") or []:
    try:
        c.create_client(base_url=u)
        result["urls"].append({"host": "", "error": ""})
    except c.DomeError as e:
        result["urls"].append({"host": "", "error": e.detail})
for s in inp["scenarios"]:
    result["scenarios"].append(run(s))
sys.stdout.write(json.dumps(result))

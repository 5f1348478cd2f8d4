"""What every worker of the waves example shares: its attempt, its grant, and
the clients dome gen made of the two skills, talking to the gateway over the
Unix socket dome bound into the sandbox.

The clients are the generated ones (clients/client/python/<tool>/default/),
checked against their manifest.json before use; only the transport is ours:
http.client over the socket at $DOME_GATEWAY_SOCKET instead of TCP.
"""
import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys

TOOLS = os.environ.get("DOME_TOOLS", os.path.dirname(os.path.abspath(__file__)))


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("gateway.invalid", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


class UnixTransport:
    """The generated runtime's transport interface, over a Unix socket."""

    def __init__(self, path):
        self._path = path
        self._conn = None

    def send(self, method, url, headers, body, timeout):
        target = "/" + url.split("://", 1)[1].split("/", 1)[1]
        for fresh in (False, True):
            if self._conn is None or fresh:
                self._conn = _UnixConnection(self._path, timeout)
            try:
                self._conn.request(method, target, body=body, headers=dict(headers))
                resp = self._conn.getresponse()
                return resp.status, resp.headers, resp.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._conn.close()
                self._conn = None
                if fresh:
                    raise
        raise ConnectionError("unreachable")


def _load(tool):
    path = os.path.join(TOOLS, "clients", "client", "python", tool, "default")
    name = tool.replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, "__init__.py"), submodule_search_locations=[path])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod, path


class Worker:
    """One attempt: env(), read(), grep(), listing(), submit()."""

    def __init__(self):
        self.task = os.environ["DOME_TASK_ID"]
        self.node = os.environ["DOME_NODE_ID"]
        self.workdir = os.environ.get("DOME_WORKDIR", ".")
        self.outputs = os.environ.get("DOME_OUTPUTS", "")
        self.params = json.loads(os.environ.get("DOME_ACTION_PARAMS") or "{}")
        grant = os.environ["DOME_GRANT"]
        transport = UnixTransport(os.environ["DOME_GATEWAY_SOCKET"])
        self.rr, rr_dir = _load("repo-read")
        self.pp, _ = _load("patch-proposal")
        # load_client checks every file of the client against manifest.json
        self.repo = self.rr.load_client(rr_dir, tool="repo-read", profile="default",
                                         credentials={"dome_grant": grant}, transport=transport)

    def _call(self, fn, body):
        res = fn(self.repo, body)
        if res.status != 200:
            err = res.body.get("error", {}) if isinstance(res.body, dict) else {}
            raise GatewayError(res.status, err.get("code", "?"), err.get("message", ""), (err.get("details") or {}).get("reason", ""))
        return res.body

    def read(self, path):
        """A file of the wave's base, through the gateway (repo-read/read_file)."""
        return self._call(self.rr.read_file, {"path": path})["content"]

    def grep(self, pattern, paths=None):
        body = {"pattern": pattern}
        if paths:
            body["paths"] = paths
        return self._call(self.rr.grep, body)["matches"]

    def listing(self, path=".", recursive=True):
        return self._call(self.rr.list_tree, {"path": path, "recursive": recursive})["entries"]

    def base(self):
        return self._call(self.rr.get_base_ref, {})

    def write(self, path, text):
        full = os.path.join(self.workdir, path)
        os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def evidence(self, kind, doc):
        """Leave an evidence file in the outputs folder (collected by dome run)."""
        with open(os.path.join(self.outputs, kind + ".json"), "w") as f:
            json.dump(doc, f, indent=2, sort_keys=True)

    def submit(self, *intents):
        """Propose what changed: dome worker submit diffs the tree against the
        base through the gateway and submits it with this attempt's grant."""
        args = ["dome", "worker", "submit"]
        for i in intents:
            args += ["--intent", i]
        sys.exit(subprocess.call(args))


class GatewayError(Exception):
    def __init__(self, status, code, message, reason):
        super().__init__("%d %s: %s (%s)" % (status, code, message, reason))
        self.status, self.code, self.reason = status, code, reason

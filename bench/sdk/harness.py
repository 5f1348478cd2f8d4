# The Python side of bench/sdk: the same request without the layer (the
# runtime's transport + decode, as ToolClient.send uses them) against the
# client's operation function (enforced), interleaved rounds.
import json
import sys
import time

sys.path.insert(0, sys.argv[1])
import domeclient as c  # noqa: E402
from domeclient import runtime as rt  # noqa: E402
from domeclient.client import _path  # noqa: E402

base, rounds, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
client = c.create_client(base_url=base, credentials={"apiKey": "k"})
tr = rt.StdlibTransport()


def raw():
    res = client._decode("getItem", tr.send("GET", base + "/items/" + _path(7), {"X-API-Key": "k"}, None, 30.0))
    assert res.status == 200 and res.body["id"] == 7


def enforced():
    res = c.get_item(client, 7)
    assert res.status == 200 and res.body["id"] == 7


for _ in range(200):
    raw()
    enforced()
out = {"baseline": [], "enforced": []}
for _ in range(rounds):
    t0 = time.perf_counter()
    for _ in range(n):
        raw()
    t1 = time.perf_counter()
    for _ in range(n):
        enforced()
    t2 = time.perf_counter()
    out["baseline"].append((t1 - t0) * 1e6 / n)
    out["enforced"].append((t2 - t1) * 1e6 / n)
sys.stdout.write(json.dumps(out))

# The Python side of bench/sdk: the same request without the layer (the
# runtime's transport + decode, as ToolClient.send uses them) against the
# client's operation function (enforced), in interleaved ABBA rounds.
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


def per(f):
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) * 1e6 / n


out = {"baseline": [], "enforced": []}
# ABBA: even rounds run the baseline first, odd rounds the layer first, so
# that warm-up and drift within a round favour neither.
for r in range(rounds):
    if r % 2 == 0:
        out["baseline"].append(per(raw))
        out["enforced"].append(per(enforced))
    else:
        out["enforced"].append(per(enforced))
        out["baseline"].append(per(raw))
sys.stdout.write(json.dumps(out))

"""peek-git: a worker that goes for the repository's .git/config. There is
none in its scratch tree (made from git objects), none above it (the
sandbox shows nothing of the host), and the gateway refuses the path."""
import os
import sys
import dome_worker

w = dome_worker.Worker()
for p in [".git/config", "../.git/config", "/work/../.git/config"]:
    print(p, "exists" if os.path.exists(p) else "does not exist")
try:
    w.read(".git/config")
except dome_worker.GatewayError as e:
    print("gateway:", e)
    sys.exit(1)

"""chatty: a worker that keeps calling past its call budget (the task
narrows it to 5 calls): refused BUDGET_EXHAUSTED, then, once it has been
refused too often, cut off and killed by the coordinator."""
import dome_worker

w = dome_worker.Worker()
seen = set()
for i in range(100000):
    try:
        w.read("README.md")
    except dome_worker.GatewayError as e:
        if e.reason not in seen:
            seen.add(e.reason)
            print("call", i + 1, e, flush=True)

"""sleeper: a worker that never finishes. Its grant's wall time ends it."""
import time

time.sleep(10**6)

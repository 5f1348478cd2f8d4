"""version-a, version-b: two edits of the same line (VERSION). The stack
applies one; the other is reopened and runs again on the next wave's base,
where it sees the first one's version."""
import dome_worker

w = dome_worker.Worker()
current = w.read("VERSION").strip()
w.write("VERSION", w.params["version"] + "\n")
print("VERSION %s -> %s" % (current, w.params["version"]))
w.submit("chore")

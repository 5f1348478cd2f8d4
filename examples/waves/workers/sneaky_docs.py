"""sneaky-docs: a docs task (its grant writes docs/ only) that also edits
go.mod. dome worker submit is refused PATH_OUTSIDE_ROOTS by the gateway;
nothing is submitted and its single-use grant is not spent."""
import dome_worker

w = dome_worker.Worker()
w.write("docs/guide.md", w.read("docs/guide.md") + "\nSee also go.mod.\n")
w.write("go.mod", w.read("go.mod") + "\nrequire example.com/evil v1.0.0\n")
w.submit("docs")

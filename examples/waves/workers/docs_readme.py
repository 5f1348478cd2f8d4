"""docs-readme: document the module's functions in the README, reading the
code through the gateway (list_tree, grep, read_file)."""
import dome_worker

w = dome_worker.Worker()
funcs = []
for m in w.grep(r"^func [A-Z]", ["**/*.go"]):
    name = m["text"][len("func "):].split("(")[0]
    # the doc comment is the line above the declaration
    lines = w.read(m["path"]).splitlines()
    doc = lines[m["line"] - 2].lstrip("/ ") if m["line"] > 1 else ""
    funcs.append("- `%s`: %s" % (name, doc))
readme = w.read("README.md").rstrip("\n")
w.write("README.md", readme + "\n\n## API\n\n" + "\n".join(funcs) + "\n")
w.submit("docs")

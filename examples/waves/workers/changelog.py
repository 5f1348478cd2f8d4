"""changelog: write the release notes once the docs and the tests are in
(its dependencies): they are in this node's base."""
import dome_worker

w = dome_worker.Worker()
files = sorted(e["path"] for e in w.listing() if e["type"] == "blob")
assert "greet/greet_test.go" in files and "## API" in w.read("README.md"), "docs or tests missing from my base"
w.write("CHANGELOG.md", "# Changelog\n\n## %s\n\n- API section in the README\n- a shared phrase helper\n- tests of both greetings\n"
        % w.read("VERSION").strip())
w.submit("docs")

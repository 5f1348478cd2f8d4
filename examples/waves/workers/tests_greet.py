"""tests-greet: test the greetings (after the refactor, which this node
depends on: its base holds format.go)."""
import dome_worker

w = dome_worker.Worker()
assert any(e["path"] == "greet/format.go" for e in w.listing("greet")), "the refactor is not in my base"
w.write("greet/greet_test.go", """package greet

import "testing"

func TestGreetings(t *testing.T) {
\tfor _, tc := range []struct{ got, want string }{
\t\t{Hello("Ada"), "Hello, Ada!"},
\t\t{Goodbye("Ada"), "Goodbye, Ada!"},
\t} {
\t\tif tc.got != tc.want {
\t\t\tt.Errorf("got %q, want %q", tc.got, tc.want)
\t\t}
\t}
}
""")
w.submit("tests")

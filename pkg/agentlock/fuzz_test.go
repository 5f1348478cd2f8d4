package agentlock

import (
	"errors"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

// FuzzParseAgents: any bytes give an agent or an input error with a
// location, never a panic; an accepted agent resolves and renders.
func FuzzParseAgents(f *testing.F) {
	f.Add([]byte(validAgents))
	f.Add([]byte("---\nname: a\nversion: '1'\nrequires: {mcp: [{category: c, permissions: [p]}]}\n---\n"))
	f.Add([]byte("---\na: &x [*x]\n---\n"))
	f.Add([]byte("---\n- [[[[\n---"))
	f.Add([]byte("no frontmatter"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAgents("agents.md", data)
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || !errkind.IsInput(err) || len(inv.Diags) == 0 {
				t.Fatalf("not an input error with diagnostics: %v", err)
			}
			return
		}
		res, err := Resolve(a, &Index{Servers: []Server{srv("s", "1")}}, Origin{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Explain().Marshal(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParseIndex: any bytes give an index or an input error with a line.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"servers": [` + server1 + `]}`))
	f.Add([]byte(`{"servers": [` + server1 + `,` + server1 + `]}`))
	f.Add([]byte(`{"servers": [{"id": 1}]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := ParseIndex("mcp.index.json", data)
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || !errkind.IsInput(err) || len(inv.Diags) == 0 || inv.Diags[0].Line < 1 {
				t.Fatalf("not an input error with a line: %v", err)
			}
			return
		}
		res, err := Resolve(agent(), idx, Origin{Digest: idx.Digest})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK() {
			l, err := res.Lock()
			if err != nil {
				t.Fatal(err)
			}
			b, err := l.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseLock("agents.lock", b); err != nil {
				t.Fatalf("dome cannot read its own lock: %v\n%s", err, b)
			}
		}
	})
}

// FuzzParseLock: any bytes give a lock or an input error, and a lock that
// parses has the shape the schema promises.
func FuzzParseLock(f *testing.F) {
	res, _ := Resolve(agent(), &Index{Servers: []Server{srv("s", "1")}}, Origin{Digest: "sha256:" + strings.Repeat("0", 64)})
	l, _ := res.Lock()
	b, _ := l.Marshal()
	f.Add(b)
	f.Add([]byte(`{"lockfileVersion": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLock("agents.lock", data)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		if l.LockfileVersion != LockfileVersion || l.HashFormula != HashFormula {
			t.Fatalf("accepted a lock of another format: %+v", l)
		}
		if c := Changes(l, l); len(c) != 0 {
			t.Fatalf("a lock differs from itself: %v", c)
		}
	})
}

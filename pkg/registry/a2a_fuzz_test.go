package registry

import "testing"

func FuzzParseA2ARef(f *testing.F) {
	for _, s := range []string{"runtime/dome-worker@HEAD", "profile/x", "tool/a@", "x/y@z", "runtime/../x@HEAD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseA2ARef("arg", s, "HEAD")
		if err != nil {
			return
		}
		if !ValidID(r.ID) || r.Rev == "" || (r.Kind != "runtime" && r.Kind != "tool" && r.Kind != "profile") {
			t.Fatalf("%q parsed to %+v", s, r)
		}
		again, err := ParseA2ARef("arg", r.String(), "")
		if err != nil || again != r {
			t.Fatalf("%q: round trip %+v -> %+v (%v)", s, r, again, err)
		}
	})
}

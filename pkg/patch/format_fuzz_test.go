package patch

import (
	"bytes"
	"testing"
)

// FuzzCanonicalDiff: whatever CanonicalDiff accepts, its output is a fixed
// point (canonicalizing it again gives the same bytes).
func FuzzCanonicalDiff(f *testing.F) {
	f.Add([]byte("diff --git a/f b/f\nindex 1234567..89abcde 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@ s\n-a\n+b\n"))
	f.Add([]byte("diff --git a/x b/y\nold mode 100644\nnew mode 100755\nsimilarity index 90%\nrename from x\nrename to y\n"))
	f.Add([]byte("diff --git a/b b/b\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZ?wVPXIP00II5\n\nliteral 0\nHcmV?d00001\n\n"))
	f.Add([]byte("diff --git \"a/t\\303\\251\" \"b/t\\303\\251\"\n--- \"a/t\\303\\251\"\n+++ \"b/t\\303\\251\"\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c1, _, err := CanonicalDiff(data, "fuzz")
		if err != nil {
			return
		}
		c2, _, err := CanonicalDiff(c1, "fuzz")
		if err != nil {
			t.Fatalf("canonical form does not canonicalize: %v\n%q", err, c1)
		}
		if !bytes.Equal(c1, c2) {
			t.Fatalf("not a fixed point:\n%q\n%q", c1, c2)
		}
	})
}

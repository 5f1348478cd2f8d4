package patch

import (
	"strings"
	"testing"
)

const twoFiles = `diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
diff --git a/b.txt b/b.txt
old mode 100644
new mode 100755
diff --git a/c.txt b/c.txt
index 3333333..4444444 100644
--- a/c.txt
+++ b/c.txt
@@ -10,2 +10,3 @@ func x() {
 ten
+	eleven  
 twelve
`

func TestPatchIDs_MatchGitAndIgnoreFileOrder(t *testing.T) {
	parts := strings.SplitAfter(twoFiles, "three\n")
	reordered := parts[1] + parts[0]
	a, b := PatchIDs([]byte(twoFiles)), PatchIDs([]byte(reordered))
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("ids: %v %v", a, b)
	}
	// The mode-only diff is hashed with the file that follows it, as git
	// does, so moving a.txt (not b.txt) keeps the id.
	if a[0].ID != b[0].ID {
		t.Errorf("file order changed the id: %s vs %s", a[0].ID, b[0].ID)
	}
	dir := gitRepo(t, nil)
	for _, text := range []string{twoFiles, reordered} {
		want := strings.Fields(run(t, dir, []byte(text), "patch-id", "--stable"))
		got := PatchIDs([]byte(text))
		if len(want) < 1 || got[0].ID.String() != want[0] {
			t.Errorf("dome %s, git %v", got[0].ID, want)
		}
	}
}

func TestFingerprints_NormalizationAndRanges(t *testing.T) {
	p := mustParse(t, twoFiles)
	fps := Fingerprints(p, "0123456789012345678901234567890123456789")
	if len(fps) != 3 {
		t.Fatalf("%d fingerprints", len(fps))
	}
	if fps[0].RangeHint == nil || *fps[0].RangeHint != (Range{Start: 1, End: 3}) || fps[0].Hunk != 1 || fps[0].FingerprintVersion != FingerprintVersion {
		t.Errorf("a.txt: %+v", fps[0])
	}
	if fps[1].RangeHint != nil || fps[1].Path != "b.txt" {
		t.Errorf("mode change should be file-level: %+v", fps[1])
	}
	// CRLF and trailing blanks do not change the digests.
	crlf := strings.NewReplacer(" one\n", " one\r\n", "-two\n", "-two\r\n", "+TWO\n", "+TWO \t\r\n", " three\n", " three\r\n").Replace(twoFiles)
	q, err := Parse([]byte(crlf), ParseOptions{Strip: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := Fingerprints(q[0], fps[0].BaseRef)
	if g[0].EditDigest != fps[0].EditDigest || g[0].BaseContextDigest != fps[0].BaseContextDigest {
		t.Errorf("normalization: %+v vs %+v", g[0], fps[0])
	}
}

func TestComputeOverlap(t *testing.T) {
	mk := func(path string, start int, edit string) *Patch {
		ctx := []string{"c1", "c2", "c3"}
		if start >= 40 && start < 90 {
			ctx = []string{"d1", "d2", "d3"}
		}
		text := "diff --git a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path + "\n" +
			"@@ -" + itoa(start) + ",4 +" + itoa(start) + ",4 @@\n " + ctx[0] + "\n " + ctx[1] + "\n-old\n+" + edit + "\n " + ctx[2] + "\n"
		return mustParse(t, text)
	}
	tests := []struct {
		name   string
		a, b   *Patch
		want   bool
		reason string
	}{
		{"same file, intersecting ranges", mk("f", 10, "x"), mk("f", 12, "y"), true, "range"},
		{"same file, disjoint ranges", mk("f", 10, "x"), mk("f", 40, "y"), false, ""},
		{"different files", mk("f", 10, "x"), mk("g", 10, "y"), true, "context_digest"},
		{"identical hunks are the same change", mk("f", 10, "x"), mk("f", 10, "x"), false, ""},
		{"equal context, different edit, elsewhere in the file", mk("f", 10, "x"), mk("f", 90, "y"), true, "context_digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ov := ComputeOverlap(tt.a, tt.b, Fingerprints(tt.a, ""), Fingerprints(tt.b, ""))
			if ov.Overlaps != tt.want {
				t.Fatalf("overlaps = %v, want %v (%+v)", ov.Overlaps, tt.want, ov)
			}
			if tt.want && ov.Hunks[0].Reason != tt.reason {
				t.Errorf("reason %q, want %q", ov.Hunks[0].Reason, tt.reason)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

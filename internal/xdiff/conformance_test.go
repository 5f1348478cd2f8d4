package xdiff

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

// TestConformance_RealHistory holds Diff and Merge to git on a real
// history (DOME_CONFORMANCE_REPO, the last DOME_CONFORMANCE_MAX3 commits,
// default 300; `make conformance`): every text file a commit changes is
// diffed as `git log -p --diff-algorithm=myers --no-indent-heuristic -U0`
// shows it (git diff --no-index of the blobs), and merged three ways as the commit applied onto its
// grandparent would be (base: the parent's file, ours: the
// grandparent's, theirs: the commit's) as `git apply --3way` merges it.
func TestConformance_RealHistory(t *testing.T) {
	repo := os.Getenv("DOME_CONFORMANCE_REPO")
	if repo == "" {
		t.Skip("DOME_CONFORMANCE_REPO not set")
	}
	gittest.Need(t)
	max := 300
	if s := os.Getenv("DOME_CONFORMANCE_MAX3"); s != "" {
		max, _ = strconv.Atoi(s)
	}
	head := "HEAD"
	if out := runGit(t, repo, nil, "rev-parse", "-q", "--verify", "HEAD"); len(out) == 0 {
		head = strings.Fields(string(runGit(t, repo, nil, "for-each-ref", "--count=1", "--format=%(objectname)", "refs/heads", "refs/remotes")))[0]
	}
	// the files each commit changes, from the raw log (it reads no blob: a
	// mirror may lack some)
	log := string(runGit(t, repo, nil, "log", "--raw", "--no-merges", "--no-renames", "--no-abbrev",
		"--format=commit %H %P", "--max-count="+strconv.Itoa(max), head))
	type fileDiff struct {
		commit, parent, path, old, new string
	}
	var diffs []fileDiff
	var commit, parent string
	for _, l := range strings.Split(log, "\n") {
		if rest, ok := strings.CutPrefix(l, "commit "); ok {
			f := strings.Fields(rest)
			commit, parent = f[0], ""
			if len(f) > 1 {
				parent = f[1]
			}
			continue
		}
		// :100644 100644 <old> <new> M\t<path>
		meta, path, ok := strings.Cut(l, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 5 || parent == "" || strings.HasPrefix(f[0], ":160000") || strings.HasPrefix(f[1], "160000") {
			continue // not a file line, the root, or a submodule
		}
		diffs = append(diffs, fileDiff{commit: commit, parent: parent, path: path, old: f[2], new: f[3]})
	}
	// the blobs: each file before and after, and as the grandparent has it
	blobs := map[string][]byte{}
	want := func(spec string) { blobs[spec] = nil }
	for _, d := range diffs {
		want(d.old)
		want(d.new)
		want(d.parent + "~1:" + d.path)
	}
	readBlobs(t, repo, blobs)
	text := func(b []byte) bool { return b != nil && bytes.IndexByte(b[:min(len(b), 8000)], 0) < 0 }

	diffed, merged, conflicted := 0, 0, 0
	var triples []triple
	var names []string
	var pairs []pair
	var pairNames []string
	for _, d := range diffs {
		old, nw := blobs[d.old], blobs[d.new]
		if strings.Trim(d.old, "0") == "" {
			old = []byte{}
		}
		if strings.Trim(d.new, "0") == "" {
			nw = []byte{}
		}
		if !text(old) || !text(nw) {
			continue
		}
		pairs = append(pairs, pair{old, nw})
		pairNames = append(pairNames, d.commit[:12]+" "+d.path)
		if ours := blobs[d.parent+"~1:"+d.path]; text(ours) && len(old) > 0 && len(nw) > 0 {
			triples = append(triples, triple{old, ours, nw})
			names = append(names, d.commit[:12]+" "+d.path)
		}
	}
	for from := 0; from < len(pairs); from += 2000 {
		chunk := pairs[from:min(from+2000, len(pairs))]
		wantDiffs := gitDiffs(t, chunk)
		for i, p := range chunk {
			diffed++
			if got := Diff(Lines(p.a), Lines(p.b)); fmt.Sprint(got) != fmt.Sprint(wantDiffs[i]) {
				t.Errorf("%s: %s", pairNames[from+i], firstDifference(got, wantDiffs[i]))
			}
		}
	}
	for from := 0; from < len(triples); from += 500 {
		chunk := triples[from:min(from+500, len(triples))]
		outs, n := gitApply3Way(t, chunk)
		for i, c := range chunk {
			got, cs := Merge(c.base, c.ours, c.theirs, MergeOptions{Ours: "ours", Theirs: "theirs", Level: Zealous})
			merged++
			if n[i] > 0 {
				conflicted++
			}
			if !bytes.Equal(got, outs[i]) || len(cs) != n[i] {
				t.Errorf("%s merged onto the grandparent: %d conflicts, git %d; the results differ: %v", names[from+i], len(cs), n[i], !bytes.Equal(got, outs[i]))
			}
		}
	}
	t.Logf("%s: %d file diffs and %d three-way merges (%d with conflicts) compared with git", repo, diffed, merged, conflicted)
}

// readBlobs fills in the blobs named by the keys (object ids or
// rev:path); a missing one stays nil.
func readBlobs(t *testing.T, repo string, blobs map[string][]byte) {
	t.Helper()
	var req strings.Builder
	var keys []string
	for k := range blobs {
		keys = append(keys, k)
		req.WriteString(k + "\n")
	}
	r := bufio.NewReader(bytes.NewReader(runGit(t, repo, strings.NewReader(req.String()), "cat-file", "--batch")))
	for _, k := range keys {
		head, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[1] != "blob" {
			continue // missing, or not a blob
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		blobs[k] = data[:n]
	}
}

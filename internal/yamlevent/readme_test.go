package yamlevent

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeIndex: every row of README.md's index of the two long files
// (a function, file:line) names a function that starts at that line, so
// the index is never out of date after an upgrade of the copy.
func TestReadmeIndex(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| `(\\w+\\.go):(\\d+)` \\|")
	rows := row.FindAllStringSubmatch(string(readme), -1)
	if len(rows) < 20 {
		t.Fatalf("the index has %d rows: is its format what the test reads?", len(rows))
	}
	files := map[string][]string{}
	for _, r := range rows {
		name, file := r[1], r[2]
		line, _ := strconv.Atoi(r[3])
		lines, ok := files[file]
		if !ok {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			lines = strings.Split(string(b), "\n")
			files[file] = lines
		}
		if line < 1 || line > len(lines) || !strings.HasPrefix(lines[line-1], "func "+name+"(") {
			t.Errorf("README.md: %s is not at %s:%d", name, file, line)
		}
	}
}

package deploytest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestGoreleaser_MatchesItsSchema validates .goreleaser.yaml against the
// schema goreleaser v2.15.1 publishes (make release-check runs goreleaser
// check itself), and checks the promises the file makes: the six targets,
// make build's flags for dome and its helpers, all three in the archive, reproducible times, checksums and an SBOM.
func TestGoreleaser_MatchesItsSchema(t *testing.T) {
	schemaDoc, err := os.ReadFile("testdata/goreleaser.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	sv, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaDoc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("goreleaser.schema.json", sv); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("goreleaser.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := readYAML(t, filepath.Join(root, ".goreleaser.yaml"))
	if err := sch.Validate(doc); err != nil {
		t.Fatalf(".goreleaser.yaml does not match goreleaser's schema:\n%v", err)
	}
	if err := sch.Validate(map[string]any{"version": 2, "builds": []any{map[string]any{"goos": "linux"}}}); err == nil {
		t.Fatal("the schema accepted goos as a string")
	}

	cfg := doc.(map[string]any)
	join := func(v any) string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return strings.Join(out, " ")
	}
	// dome (the front), dome-full and the helper programs, built alike and
	// archived together (dome looks for dome-full and the helpers beside
	// itself).
	versionVar := map[string]string{"dome": "internal/buildinfo.Version", "dome-full": "internal/buildinfo.Version", "dome-openai": "internal/domeopenai.Version", "dome-otel": "internal/domeotel.Version"}
	var ids []string
	for _, b := range cfg["builds"].([]any) {
		build := b.(map[string]any)
		id, _ := build["id"].(string)
		ids = append(ids, id)
		if build["main"] != "./cmd/"+id || build["binary"] != id {
			t.Errorf("build %s: main %v, binary %v", id, build["main"], build["binary"])
		}
		if got := join(build["goos"]) + " / " + join(build["goarch"]); got != "linux darwin / amd64 arm64" {
			t.Errorf("build %s: targets %q", id, got)
		}
		flags := join(build["flags"])
		for _, want := range []string{"-trimpath", "-tags=urfave_cli_no_docs"} {
			if !strings.Contains(flags, want) {
				t.Errorf("build %s: flags %q lack %s", id, flags, want)
			}
		}
		if join(build["env"]) != "CGO_ENABLED=0" {
			t.Errorf("build %s: env %v", id, build["env"])
		}
		if build["mod_timestamp"] != "{{ .CommitTimestamp }}" {
			t.Errorf("build %s: mod_timestamp %v: binaries' times must be the commit's", id, build["mod_timestamp"])
		}
		ld := join(build["ldflags"])
		for _, want := range []string{"-buildid=", versionVar[id] + "=v{{ .Version }}"} {
			if !strings.Contains(ld, want) {
				t.Errorf("build %s: ldflags %q lack %s", id, ld, want)
			}
		}
		if (id == "dome" || id == "dome-full") && !strings.Contains(ld, "buildinfo.Commit={{ .FullCommit }}") {
			t.Errorf("build %s: ldflags %q lack the commit", id, ld)
		}
	}
	if got := strings.Join(ids, " "); got != "dome dome-full dome-openai dome-otel" {
		t.Errorf("builds %q, want dome, dome-full and the two helpers", got)
	}
	archive := cfg["archives"].([]any)[0].(map[string]any)
	if got := join(archive["ids"]); got != "dome dome-full dome-openai dome-otel" {
		t.Errorf("the archive holds the builds %q, want dome and its helpers", got)
	}
	if _, ok := cfg["checksum"]; !ok {
		t.Error("no checksum")
	}
	if _, ok := cfg["sboms"]; !ok {
		t.Error("no SBOM")
	}
}

// TestGoreleaser_HooksStayInTheBuildGraph keeps the release hooks from
// fetching modules dome never builds: in workspace mode (go.work) a bare
// `go mod download` walks the whole module graph, and a module proxy that
// refuses one of those versions failed the release check in CI.
func TestGoreleaser_HooksStayInTheBuildGraph(t *testing.T) {
	cfg := readYAML(t, filepath.Join(root, ".goreleaser.yaml")).(map[string]any)
	before, _ := cfg["before"].(map[string]any)
	hooks, _ := before["hooks"].([]any)
	if len(hooks) == 0 {
		t.Fatal(".goreleaser.yaml: before.hooks is empty; the docs check and the completions are gone")
	}
	for _, h := range hooks {
		cmd, _ := h.(string)
		if m, ok := h.(map[string]any); ok {
			cmd, _ = m["cmd"].(string)
		}
		if strings.Contains(cmd, "go mod download") && !strings.Contains(cmd, "GOWORK=off") {
			t.Errorf(".goreleaser.yaml: hook %q downloads the whole workspace module graph; drop it or run it with GOWORK=off", cmd)
		}
	}
}

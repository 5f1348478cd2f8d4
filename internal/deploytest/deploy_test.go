package deploytest

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

const root = "../.."

func readYAML(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// Through JSON, so that the validator sees JSON types.
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCompose_MatchesTheComposeSpec(t *testing.T) {
	schemaDoc, err := os.ReadFile("testdata/compose-spec.json")
	if err != nil {
		t.Fatal(err)
	}
	sv, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaDoc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("compose-spec.json", sv); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("compose-spec.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(readYAML(t, filepath.Join(root, "compose.yaml"))); err != nil {
		t.Fatalf("compose.yaml does not match the Compose Specification:\n%v", err)
	}
	// The schema is not a no-op: a misspelt key fails it.
	bad := map[string]any{"services": map[string]any{"dome": map[string]any{"imagee": "dome"}}}
	if err := sch.Validate(bad); err == nil {
		t.Fatal("the schema accepted a service with an unknown key")
	}
}

func TestCompose_HealthChecksAndHardening(t *testing.T) {
	doc := readYAML(t, filepath.Join(root, "compose.yaml")).(map[string]any)
	services := doc["services"].(map[string]any)
	for name, s := range services {
		if _, ok := s.(map[string]any)["healthcheck"]; !ok {
			t.Errorf("service %s has no healthcheck", name)
		}
	}
	dome := services["dome"].(map[string]any)
	if got := dome["depends_on"].(map[string]any)["db"].(map[string]any)["condition"]; got != "service_healthy" {
		t.Errorf("dome starts before the database is healthy (depends_on condition %v)", got)
	}
	test := dome["healthcheck"].(map[string]any)["test"].([]any)
	if fmt.Sprint(test) != "[CMD /usr/local/bin/dome serve probe]" {
		t.Errorf("dome's healthcheck is %v, want dome serve probe", test)
	}
	if dome["read_only"] != true {
		t.Error("dome's root file system is not read-only")
	}
	env := dome["environment"].(map[string]any)
	if !strings.Contains(env["DATABASE_URL"].(string), "${POSTGRES_PASSWORD}") {
		t.Error("DATABASE_URL does not take the password from POSTGRES_PASSWORD")
	}
	db := services["db"].(map[string]any)
	if pw := db["environment"].(map[string]any)["POSTGRES_PASSWORD"].(string); !strings.HasPrefix(pw, "${POSTGRES_PASSWORD:?") {
		t.Errorf("the database password %q is not required from the environment", pw)
	}
}

// dockerfile returns the instructions of the Dockerfile, continuation lines
// joined.
func dockerfile(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cur := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") && cur == "" {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cur += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		cur += l
		if strings.TrimSpace(cur) != "" {
			out = append(out, strings.TrimSpace(cur))
		}
		cur = ""
	}
	return out
}

func TestDockerfile_MultiStageStaticNonRoot(t *testing.T) {
	ins := dockerfile(t)
	var froms []string
	user, healthcheck, entry := "", "", ""
	for _, l := range ins {
		switch strings.ToUpper(strings.Fields(l)[0]) {
		case "FROM":
			froms = append(froms, l)
		case "USER":
			user = strings.Fields(l)[1]
		case "HEALTHCHECK":
			healthcheck = l
		case "ENTRYPOINT":
			entry = l
		}
	}
	if len(froms) < 2 || !strings.HasSuffix(froms[0], " AS build") {
		t.Fatalf("not a multi-stage build: %v", froms)
	}
	final := froms[len(froms)-1]
	if !strings.Contains(final, "gcr.io/distroless/static") && !strings.HasSuffix(final, "scratch") {
		t.Errorf("the final stage %q is neither distroless static nor scratch", final)
	}
	if user == "" || user == "0" || strings.HasPrefix(user, "root") || strings.HasPrefix(user, "0:") {
		t.Errorf("the image runs as %q, want a non-root user", user)
	}
	if !strings.Contains(healthcheck, `CMD ["/usr/local/bin/dome", "serve", "probe"]`) {
		t.Errorf("HEALTHCHECK %q does not run dome serve probe", healthcheck)
	}
	if !strings.HasPrefix(entry, `ENTRYPOINT ["`) {
		t.Errorf("ENTRYPOINT %q is not in exec form", entry)
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil || !regexp.MustCompile(`(?m)^\.git$`).Match(ignore) {
		t.Errorf(".dockerignore does not leave .git out of the context")
	}
}

// TestDockerfile_BuildStage runs the build stage's go build command (the
// one RUN that builds dome) here, and checks what a container would get: a
// static binary, built with make build's tags, that starts.
func TestDockerfile_BuildStage(t *testing.T) {
	var build string
	for _, l := range dockerfile(t) {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") {
			build = strings.TrimPrefix(l, "RUN ")
		}
	}
	if build == "" {
		t.Fatal("no RUN go build in the Dockerfile")
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-tags urfave_cli_no_docs", "-o /out/dome ./cmd/dome ", "-o /out/dome-full ./cmd/dome-full "} {
		if !strings.Contains(build, want) {
			t.Errorf("the build command lacks %q: %s", want, build)
		}
	}
	makefile, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	if !regexp.MustCompile(`(?m)^TAGS +\?= urfave_cli_no_docs$`).Match(makefile) {
		t.Error("make build's tags changed: keep the Dockerfile's in step")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not found")
	}
	out := t.TempDir()
	build = strings.ReplaceAll(build, "/out/dome", filepath.Join(out, "dome"))
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "VERSION=v0.0.0-docker", "COMMIT=0123456789abcdef")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}
	for _, prog := range []string{"dome", "dome-full"} {
		f, err := elf.Open(filepath.Join(out, prog))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s is dynamically linked (%v): it would not start on distroless static", prog, p.Type)
			}
		}
		f.Close()
	}
	// The image holds both: dome hands its commands to dome-full beside it.
	copied := false
	for _, l := range dockerfile(t) {
		if f := strings.Fields(l); f[0] == "COPY" && f[1] == "--from=build" && strings.Contains(l, "/out/dome ") && strings.Contains(l, "/out/dome-full ") && f[len(f)-1] == "/usr/local/bin/" {
			copied = true
		}
	}
	if !copied {
		t.Error("the final stage does not copy both /out/dome and /out/dome-full into /usr/local/bin/")
	}
	// dome serve: the front hands it to dome-full.
	if b, err := exec.Command(filepath.Join(out, "dome"), "serve", "--help").CombinedOutput(); err != nil || !strings.Contains(string(b), "--store") {
		t.Errorf("dome serve --help through the front: %v\n%s", err, b)
	}
	v, err := exec.Command(filepath.Join(out, "dome"), "version", "--json").Output()
	if err != nil || !strings.Contains(string(v), `"version": "v0.0.0-docker"`) || !strings.Contains(string(v), `"commit": "0123456789abcdef"`) {
		t.Fatalf("dome version --json: %v\n%s", err, v)
	}
}

// TestDockerfile_ModuleStage replays the build stage's first steps: the files
// its COPY instructions take before `RUN GOWORK=off go mod download`, alone in a
// folder, must be enough to download every module (go.work and the patched
// copy in third_party/ included), here from this machine's module cache.
func TestDockerfile_ModuleStage(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found")
	}
	var copies []string
	for _, l := range dockerfile(t) {
		if strings.HasPrefix(l, "RUN GOWORK=off go mod download") {
			break
		}
		if f := strings.Fields(l); f[0] == "COPY" && !strings.HasPrefix(f[1], "--") {
			copies = append(copies, f[1:len(f)-1]...)
		}
	}
	joined := " " + strings.Join(copies, " ") + " "
	for _, want := range []string{" go.mod ", " go.sum ", " go.work ", " go.work.sum ", " third_party/ "} {
		if !strings.Contains(joined, want) {
			t.Errorf("the build stage does not copy %s before go mod download (the container would build with upstream jsonschema, or fail)", strings.TrimSpace(want))
		}
	}
	dir := t.TempDir()
	for _, c := range copies {
		cp := exec.Command("cp", "-r", filepath.Join(root, strings.TrimSuffix(c, "/")), dir)
		if out, err := cp.CombinedOutput(); err != nil {
			t.Fatalf("COPY %s: %v\n%s", c, err, out)
		}
	}
	out, err := exec.Command(gocmd, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	// The workspace build never needs upstream jsonschema (go.work puts the
	// patched copy in its place), so a fresh machine's cache may not hold it:
	// fill the cache from the configured proxy first, as the container's
	// build stage would.
	fill := exec.Command(gocmd, "mod", "download")
	fill.Dir = root
	fill.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if b, err := fill.CombinedOutput(); err != nil {
		t.Skipf("the module cache lacks go.mod's modules and the proxy cannot supply them: %v\n%s", err, b)
	}
	cmd := exec.Command(gocmd, "mod", "download")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOMODCACHE="+filepath.Join(dir, ".modcache"), "GOPROXY=file://"+cache, "GOSUMDB=off", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod download with only %v: %v\n%s", copies, err, b)
	}
	exec.Command("chmod", "-R", "u+w", dir).Run() // the module cache is read-only; let TempDir remove it
}

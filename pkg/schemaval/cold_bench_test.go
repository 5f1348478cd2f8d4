package schemaval_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// What a dome command pays to validate its first file: a fresh process
// compiles the registry's tool schema and validates the example petstore
// tool.json, with this package or with santhosh-tekuri/jsonschema. The
// upstream figure includes compiling its draft meta-schemas, which upstream
// does in a package init (every process pays it) and the copy dome builds
// with (third_party/, through go.work) does on first use.
//
//	go test ./pkg/schemaval -run '^$' -bench ColdFirstValidation -benchtime 20x

func TestMain(m *testing.M) {
	if which := os.Getenv("DOME_SCHEMAVAL_COLD"); which != "" {
		os.Exit(coldRun(which))
	}
	os.Exit(m.Run())
}

func coldRun(which string) int {
	schema, err1 := os.ReadFile("../registry/schemas/tool.schema.json")
	doc, err2 := os.ReadFile("../../registry/tools/petstore/tool.json")
	if err1 != nil || err2 != nil {
		fmt.Println("read:", err1, err2)
		return 1
	}
	start := time.Now()
	switch which {
	case "schemaval":
		if err := schemaval.MustCompile("tool.schema.json", schema).Validate("tool.json", doc); err != nil {
			fmt.Println(err)
			return 1
		}
	case "upstream":
		sv, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			fmt.Println(err)
			return 1
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("mem:///tool.schema.json", sv); err != nil {
			fmt.Println(err)
			return 1
		}
		s, err := c.Compile("mem:///tool.schema.json")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil || s.Validate(inst) != nil {
			fmt.Println("validate:", err)
			return 1
		}
	}
	fmt.Printf("cold-ns %d\n", time.Since(start).Nanoseconds())
	return 0
}

func BenchmarkColdFirstValidation(b *testing.B) {
	for _, which := range []string{"schemaval", "upstream"} {
		b.Run(which, func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "DOME_SCHEMAVAL_COLD="+which)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("%s: %v\n%s", which, err, out)
				}
				f := strings.Fields(strings.TrimSpace(string(out)))
				if len(f) != 2 || f[0] != "cold-ns" {
					b.Fatalf("%s: %s", which, out)
				}
				ns, _ := strconv.ParseInt(f[1], 10, 64)
				total += time.Duration(ns)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-validation")
		})
	}
}

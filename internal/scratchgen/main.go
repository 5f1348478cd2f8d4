package main

import (
	"fmt"
	"os"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
)

func main() {
	for _, f := range os.Args[1:] {
		data, _ := os.ReadFile(f)
		t0 := time.Now()
		l := openapi3.NewLoader()
		doc, err := l.LoadFromData(data)
		if err != nil {
			fmt.Println(f, "load", err)
			continue
		}
		v := "v2.8.2"
		out, err := codegen.Generate(doc, codegen.Configuration{PackageName: "client", NoVCSVersionOverride: &v,
			Generate: codegen.GenerateOptions{Client: true, Models: true},
			OutputOptions: codegen.OutputOptions{SkipFmt: false}})
		fmt.Println(f, len(out), err, time.Since(t0))
		os.WriteFile("/tmp/gen-"+fmt.Sprint(len(out))+".go", []byte(out), 0o644)
	}
}

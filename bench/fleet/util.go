package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer ln.Close()
	return ln.Addr().String()
}

func numCPU() int { return runtime.NumCPU() }

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// cleanup holds what a failure must stop before it exits (os.Exit runs
// no deferred calls).
var cleanup []func()

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "fleet: "+format+"\n", a...)
	for i := len(cleanup) - 1; i >= 0; i-- {
		cleanup[i]()
	}
	os.Exit(1)
}

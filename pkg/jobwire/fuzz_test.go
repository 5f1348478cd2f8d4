package jobwire_test

import (
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/signing"
)

// FuzzOpen: any bytes on the stream are refused with a reason code or
// opened; nothing panics.
func FuzzOpen(f *testing.F) {
	k, err := signing.GenerateKey("coordinator-fuzz", nil)
	if err != nil {
		f.Fatal(err)
	}
	keys, _ := signing.NewTrustedKeys(k.Public())
	c, err := jobwire.NewChecker(keys)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := jobwire.Sign(jobwire.Job{RunID: "r", WaveID: "w", NodeID: "n", NodeExecutionID: "nx-1", TaskID: "n.1", WorkerID: "worker-n.1", Attempt: 1,
		BaseRef: "0123456789abcdef0123456789abcdef01234567", Argv: []string{"true"}, Limits: jobwire.Limits{WallMS: 1}, Grant: "{}",
		SpawnSpec: []byte(`{}`), DispatchToken: "0123456789abcdef0123456789abcdef", IssuedAt: "2026-01-01T00:00:00Z"}, k)
	f.Add(good)
	f.Add([]byte(`{"job": {}, "signature": {"alg": "ed25519", "kid": "coordinator-fuzz", "sig": "base64:AAAA"}}`))
	f.Add([]byte("not json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		op, err := c.Open(data, time.Unix(0, 0))
		if err == nil && op == nil {
			t.Fatal("no job and no refusal")
		}
		if err != nil {
			if _, ok := jobwire.AsRefusal(err); !ok {
				t.Fatalf("a refusal without a reason code: %v", err)
			}
		}
	})
}

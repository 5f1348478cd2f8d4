package tmpprof

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
)

func TestProf(t *testing.T) {
	exec.Command("rm", "-rf", "/tmp/bs4").Run()
	if out, err := exec.Command("cp", "-a", "/tmp/bs3", "/tmp/bs4").CombinedOutput(); err != nil {
		t.Fatal(string(out))
	}
	start := time.Now()
	repo, err := gitstore.Open("/tmp/bs4/dome.git")
	if err != nil {
		t.Fatal(err)
	}
	r, err := stack.OpenRun(stack.NewLayout("/tmp/bs4/ops", "bench"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("open", time.Since(start))
	sig := gitstore.Signature{Name: "d", Email: "d@x"}
	rep, err := stack.ApplyPlan(repo, r, stack.ApplyOptions{CreatedAt: time.Unix(1767322800, 0).UTC(), Producer: "p", Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Log(len(rep.Applied), time.Since(start))
	_ = os.Getenv
}

package grantstoretest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/grant"
)

// Environment of a child process (the test binary run again).
const (
	envChild = "DOME_GRANT_STORETEST_CHILD" // "race" or "loop"
	envLoc   = "DOME_GRANT_STORETEST_LOC"   // the store location
)

// ChildMain is called first in a store's TestMain: in a child process it
// plays its role on the streams it is given and reports true with the
// process's exit code (the caller exits with it); otherwise it returns
// false at once.
//
//	func TestMain(m *testing.M) {
//		open := func(loc string) (grant.Store, error) { return grantfile.Open(loc) }
//		if code, child := grantstoretest.ChildMain(open, os.Stdin, os.Stdout, os.Stderr); child {
//			os.Exit(code)
//		}
//		os.Exit(m.Run())
//	}
func ChildMain(open func(loc string) (grant.Store, error), stdin io.Reader, stdout, stderr io.Writer) (code int, isChild bool) {
	role := os.Getenv(envChild)
	if role == "" {
		return 0, false
	}
	s, err := open(os.Getenv(envLoc))
	if err != nil {
		fmt.Fprintln(stderr, "open:", err)
		return 3, true
	}
	defer s.Close()
	ctx := context.Background()
	switch role {
	case "race":
		// Wait for the parent's go, so every process spends at once.
		if _, err := bufio.NewReader(stdin).ReadString('\n'); err != nil {
			return 3, true
		}
		err := s.Spend(ctx, spend("coord", "hot", "tp-1"))
		switch {
		case err == nil:
			fmt.Fprintln(stdout, "won")
		case errors.Is(err, grant.ErrSpent):
			fmt.Fprintln(stdout, "spent")
		default:
			fmt.Fprintln(stdout, "error:", err)
		}
	case "loop":
		// Spend distinct jtis from 8 goroutines until killed, printing each
		// one only after Spend acknowledged it; the first failure ends the
		// process with code 3.
		var mu sync.Mutex
		out := bufio.NewWriter(stdout)
		failed := make(chan struct{})
		var once sync.Once
		for w := 0; w < 8; w++ {
			go func(w int) {
				for i := 0; ; i++ {
					jti := fmt.Sprintf("k%d-%d", w, i)
					if err := s.Spend(ctx, spend("coord", jti, "tp-1")); err != nil {
						once.Do(func() {
							fmt.Fprintln(stderr, "spend:", err)
							close(failed)
						})
						return
					}
					mu.Lock()
					fmt.Fprintln(out, "acked", jti)
					out.Flush()
					mu.Unlock()
				}
			}(w)
		}
		<-failed
		return 3, true
	}
	return 0, true
}

func child(t testing.TB, role, loc string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+role, envLoc+"="+loc)
	cmd.Stderr = logWriter{t}
	return cmd
}

// SpendFromProcesses starts n processes that spend the same single-use
// grant at once and fails t unless exactly one succeeds.
func SpendFromProcesses(t *testing.T, loc string, n int) {
	t.Helper()
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *strings.Builder
	}
	var ps []proc
	for i := 0; i < n; i++ {
		cmd := child(t, "race", loc)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, proc{cmd, in, &out})
	}
	time.Sleep(300 * time.Millisecond) // let every process open the store
	for _, p := range ps {
		io.WriteString(p.stdin, "go\n")
		p.stdin.Close()
	}
	wins, spent := 0, 0
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		switch strings.TrimSpace(p.out.String()) {
		case "won":
			wins++
		case "spent":
			spent++
		default:
			t.Errorf("process %d: %q", i, p.out.String())
		}
	}
	if wins != 1 || spent != n-1 {
		t.Fatalf("%d processes spending one grant: %d succeeded, %d refused; want exactly 1", n, wins, spent)
	}
}

// KillDuringSpends starts a process that spends grants as fast as it can,
// kills it with SIGKILL once it acknowledged at least acks of them, and
// returns every jti it acknowledged: each must be spent when the store is
// opened again.
func KillDuringSpends(t *testing.T, loc string, acks int) []string {
	t.Helper()
	cmd := child(t, "loop", loc)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		jti, ok := strings.CutPrefix(sc.Text(), "acked ")
		if !ok {
			continue
		}
		acked = append(acked, jti)
		if len(acked) == acks {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the spending process ended with %v, not SIGKILL (acknowledged %d)", err, len(acked))
	}
	return acked
}

// CheckAcked fails t unless every acknowledged jti is spent in s.
func CheckAcked(t *testing.T, s grant.Store, acked []string) {
	t.Helper()
	for _, jti := range acked {
		st, err := s.Lookup(context.Background(), "coord", jti, "tp-1")
		if err != nil {
			t.Fatal(err)
		}
		if st.Spent == nil {
			t.Fatalf("%s was acknowledged before the kill but is not spent after it", jti)
		}
	}
	// The store still takes spends after the crash.
	if err := s.Spend(context.Background(), spend("coord", "after-crash", "tp-1")); err != nil {
		t.Fatalf("spend after the crash: %v", err)
	}
}

// logWriter passes a child's error output to the test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

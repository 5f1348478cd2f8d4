package benchrun

import (
	"strings"
	"testing"
)

func TestDist(t *testing.T) {
	d := dist([]float64{5, 1, 3})
	if d != (Dist{3, 1, 5}) {
		t.Errorf("dist = %+v", d)
	}
	if d := dist([]float64{4, 1, 3, 2}); d.Median != 2.5 {
		t.Errorf("even median = %v", d.Median)
	}
}

func TestInterleaveRotatesAndMeasures(t *testing.T) {
	var order []string
	job := func(l string) Job {
		return Job{Label: l, Run: func() (Sample, error) { order = append(order, l); return Sample{}, nil }}
	}
	got, err := Interleave(2, 1, job("a"), job("b"), job("c"))
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(order, ""); s != "abcbcacab" {
		t.Errorf("order %s", s)
	}
	if len(got["a"]) != 2 {
		t.Errorf("a measured %d times, want 2 (the warm round is not kept)", len(got["a"]))
	}
	s, err := Exec(Cmd{Argv: []string{"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"}})
	if err != nil || s.CPU <= 0 || s.MaxRSS <= 0 || s.Wall <= 0 {
		t.Errorf("Exec: %+v, %v", s, err)
	}
	if _, err := Exec(Cmd{Argv: []string{"false"}}); err == nil {
		t.Error("a failing command did not fail")
	}
}

func TestTable(t *testing.T) {
	var b strings.Builder
	var tb Table
	tb.Row("a", "bb", "c")
	tb.Row("ddd", "e", "f")
	tb.Print(&b)
	if b.String() != "a   | bb | c\nddd | e  | f\n" {
		t.Errorf("%q", b.String())
	}
}

func TestBinariesFlag(t *testing.T) {
	var b Binaries
	for _, s := range []string{"before=/tmp/dome-old", "x=a=b"} {
		if err := b.Set(s); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	if len(b) != 2 || b[0] != (Binary{"before", "/tmp/dome-old"}) || b[1] != (Binary{"x", "a=b"}) {
		t.Errorf("got %v", b)
	}
	for _, bad := range []string{"nolabel", "=path", "label="} {
		if err := b.Set(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

package lazyre

import "testing"

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+$`)
	first := re()
	if !first.MatchString("aaa") || first.MatchString("b") {
		t.Fatal("wrong expression")
	}
	if re() != first {
		t.Fatal("compiled twice")
	}
}

func TestNewPanicsOnFirstUseOfAnInvalidExpression(t *testing.T) {
	re := New(`(`) // no panic here
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	re()
}

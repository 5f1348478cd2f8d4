package yamlevent

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func kinds(t *testing.T, p *Parser) (string, error) {
	t.Helper()
	var b strings.Builder
	var ev Event
	for {
		if err := p.Next(&ev); err != nil {
			return b.String(), err
		}
		b.WriteString(strings.Repeat(" ", 0) + string("?SsDdAVqQmM#"[ev.Kind]))
		if ev.Kind == Scalar {
			b.WriteString("(" + string(ev.Value) + ")")
		}
		if ev.Kind == StreamEnd {
			return b.String(), nil
		}
	}
}

func TestReaderAndBytesGiveTheSameEvents(t *testing.T) {
	for _, in := range []string{"", "a: 1", "- [a, {b: 'c'}]\n- |\n  x\n", "a: [1\n", "\ufeffa: é", "a: \xff"} {
		want, werr := kinds(t, NewParser([]byte(in)))
		got, gerr := kinds(t, NewReaderParser(iotest.OneByteReader(strings.NewReader(in))))
		if got != want || (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("%q: bytes %s (%v), reader %s (%v)", in, want, werr, got, gerr)
		}
	}
}

func TestReaderErrorIsKept(t *testing.T) {
	boom := errors.New("boom")
	_, err := kinds(t, NewReaderParser(io.MultiReader(bytes.NewReader([]byte("a: 1\nb: ")), iotest.ErrReader(boom))))
	if !errors.Is(err, boom) {
		t.Errorf("error = %v, want it to wrap the reader's", err)
	}
}

package agent

import (
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// TokenizerName is the BPE encoding ability budgets are counted in:
// cl100k_base, with its vocabulary compiled into dome by
// github.com/tiktoken-go/tokenizer (nothing is downloaded at run time). For
// the models that use o200k_base it counts a few percent more tokens on
// typical English and code, so a budget in cl100k_base tokens holds there
// too.
const TokenizerName = "cl100k_base"

// Tokenizer counts and cuts text in TokenizerName tokens. The vocabulary is
// built on first use (about 80 ms), so commands that never count pay
// nothing. It is safe for concurrent use.
type Tokenizer struct {
	once sync.Once
	c    *codec.Codec
}

// NewTokenizer returns a tokenizer; the vocabulary loads on first use.
func NewTokenizer() *Tokenizer { return &Tokenizer{} }

func (t *Tokenizer) codec() *codec.Codec {
	t.once.Do(func() { t.c = codec.NewCl100kBase() })
	return t.c
}

// Count returns the number of tokens of s.
func (t *Tokenizer) Count(s string) int {
	n, err := t.codec().Count(s)
	if err != nil {
		// ErrorModeNone never fails on input; count bytes as a bound.
		return len(s)
	}
	return n
}

// Truncate returns the longest prefix of s, cut on a token boundary and on
// a UTF-8 boundary, that counts at most n tokens.
func (t *Tokenizer) Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	c := t.codec()
	ids, _, err := c.Encode(s)
	if err != nil || len(ids) <= n {
		if err == nil {
			return s
		}
		return ""
	}
	for k := n; k > 0; k-- {
		out, err := c.Decode(ids[:k])
		if err != nil {
			continue
		}
		for !utf8.ValidString(out) && len(out) > 0 {
			out = out[:len(out)-1]
		}
		// Decoding a prefix and encoding it again can merge differently:
		// check the count of what is returned.
		if t.Count(out) <= n {
			return out
		}
	}
	return ""
}

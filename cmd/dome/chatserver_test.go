package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// chatServer is the "chatserver" script command: an OpenAI-compatible
// Chat Completions endpoint on 127.0.0.1 for this script, at $CHAT_URL. It
// answers "answer from MODEL for KEY-SUFFIX" (the last four characters of
// the bearer token: proof the key arrived) and 401 without a key.
func chatServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: chatserver")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		data, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		json.Unmarshal(data, &body)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.URL.Path != "/chat/completions" || len(key) < 4 {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"no key"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "answer from " + body.Model + " for " + key[len(key)-4:]}}},
			"usage": map[string]any{"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
		})
	}))
	ts.Defer(srv.Close)
	ts.Setenv("CHAT_URL", srv.URL)
}

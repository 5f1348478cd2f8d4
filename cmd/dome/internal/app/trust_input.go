package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/signing"
)

// Helpers shared by canon, digest, keygen, sign and verify.

const jsonHint = "RFC 8785 needs strict JSON (RFC 8259): one UTF-8 value, no duplicate member names, no comments, trailing commas, NaN or Infinity"

// inputPath resolves a command-line path against the working directory.
func inputPath(env *Env, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(env.WorkDir, name)
}

// sourceName is how messages name an input: the path as given, or "stdin".
func sourceName(arg string) string {
	if arg == "" || arg == "-" {
		return "stdin"
	}
	return arg
}

// openInput opens a FILE argument ("" or "-" is stdin).
func openInput(env *Env, arg string) (io.ReadCloser, error) {
	if arg == "" || arg == "-" {
		return io.NopCloser(env.Stdin), nil
	}
	f, err := os.Open(inputPath(env, arg))
	if err != nil {
		return nil, &errkind.InputError{Source: arg, Problem: "cannot read the file: " + pathErr(err), Hint: "check the path"}
	}
	return f, nil
}

// readInputFile reads a FILE argument whole ("" or "-" is stdin).
func readInputFile(env *Env, arg string) ([]byte, error) {
	r, err := openInput(env, arg)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &errkind.InputError{Source: sourceName(arg), Problem: "read failed: " + err.Error()}
	}
	return data, nil
}

func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// canonicalInputError turns a canonicalization error into an InputError that
// names the file and the line, column and byte of the fault. data is the
// input when the caller has it; for a regular file it is re-read.
func canonicalInputError(env *Env, arg string, data []byte, err error) error {
	var se *canonical.SyntaxError
	if !errors.As(err, &se) {
		return &errkind.InputError{Source: sourceName(arg), Problem: err.Error()}
	}
	field := fmt.Sprintf("byte offset %d", se.Offset)
	if data == nil && arg != "" && arg != "-" {
		if f, ferr := os.Open(inputPath(env, arg)); ferr == nil {
			data, _ = io.ReadAll(io.LimitReader(f, se.Offset))
			f.Close()
		}
	}
	if data != nil {
		line, col := canonical.Position(data, se.Offset)
		field = fmt.Sprintf("line %d, column %d (byte offset %d)", line, col, se.Offset)
	}
	return &errkind.InputError{Source: sourceName(arg), Field: field, Problem: se.Msg, Hint: jsonHint}
}

// loadTrustedKeys reads the trusted key set from --trusted FILE, else from
// the file named by TRUSTED_KEYS_PATH, else from TRUSTED_KEYS_JSON.
func loadTrustedKeys(env *Env, flagValue string) (*signing.TrustedKeys, string, error) {
	const hint = `give --trusted FILE (a JSON array of {"kid", "alg": "ed25519", "public_key": "base64:..."}; dome keygen writes one), or set TRUSTED_KEYS_PATH or TRUSTED_KEYS_JSON`
	var data []byte
	var source string
	switch {
	case flagValue != "":
		b, err := os.ReadFile(inputPath(env, flagValue))
		if err != nil {
			return nil, "", &errkind.InputError{Source: "--trusted " + flagValue, Problem: "cannot read the file: " + pathErr(err), Hint: hint}
		}
		data, source = b, "--trusted "+flagValue
	case env.Getenv("TRUSTED_KEYS_PATH") != "":
		p := env.Getenv("TRUSTED_KEYS_PATH")
		b, err := os.ReadFile(inputPath(env, p))
		if err != nil {
			return nil, "", &errkind.InputError{Source: "TRUSTED_KEYS_PATH=" + p, Problem: "cannot read the file: " + pathErr(err), Hint: hint}
		}
		data, source = b, "TRUSTED_KEYS_PATH="+p
	case strings.TrimSpace(env.Getenv("TRUSTED_KEYS_JSON")) != "":
		data, source = []byte(env.Getenv("TRUSTED_KEYS_JSON")), "TRUSTED_KEYS_JSON"
	default:
		return nil, "", &errkind.InputError{Source: "--trusted", Problem: "no trusted keys given", Hint: hint}
	}
	ts, err := signing.ParseTrustedKeys(data)
	if err != nil {
		return nil, "", &errkind.InputError{Source: source, Problem: err.Error(), Hint: hint}
	}
	return ts, source, nil
}

// loadPrivateKey reads a PKCS#8 PEM key file; the kid defaults to the file
// name without its .key or .pem extension (dome keygen writes <kid>.key).
func loadPrivateKey(env *Env, path, kid string) (signing.PrivateKey, error) {
	if kid == "" {
		base := filepath.Base(path)
		kid = strings.TrimSuffix(strings.TrimSuffix(base, ".key"), ".pem")
	}
	if err := signing.CheckKID(kid); err != nil {
		return signing.PrivateKey{}, &errkind.InputError{Source: "--key " + path, Problem: err.Error(), Hint: "name the key id with --kid"}
	}
	data, err := os.ReadFile(inputPath(env, path))
	if err != nil {
		return signing.PrivateKey{}, &errkind.InputError{Source: "--key " + path, Problem: "cannot read the key: " + pathErr(err), Hint: "create one with dome keygen --kid KID --out DIR"}
	}
	key, err := signing.ParsePrivateKey(kid, data)
	if err != nil {
		return signing.PrivateKey{}, &errkind.InputError{Source: "--key " + path, Problem: err.Error(), Hint: "give an unencrypted PKCS#8 PEM Ed25519 key (dome keygen, or openssl genpkey -algorithm ed25519)"}
	}
	return key, nil
}

// writeOutput writes data to --out (atomically) or to stdout.
func writeOutput(env *Env, out string, data []byte) error {
	if out == "" || out == "-" {
		_, err := env.Stdout.Write(data)
		return err
	}
	return writeFileAtomic(inputPath(env, out), data, 0o644)
}

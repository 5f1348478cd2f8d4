package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
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

// openInput opens a FILE argument ("" or "-" is stdin) for reading at most
// limit bytes: past them, reads fail with a *readlimit.TooLargeError.
func openInput(env *Env, arg string, limit int64) (io.ReadCloser, error) {
	if arg == "" || arg == "-" {
		return io.NopCloser(readlimit.Reader(env.Stdin, limit)), nil
	}
	f, err := os.Open(inputPath(env, arg))
	if err != nil {
		return nil, &errkind.InputError{Source: arg, Problem: "cannot read the file: " + pathErr(err), Hint: "check the path"}
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		f.Close()
		return nil, tooLarge(arg, limit)
	}
	return struct {
		io.Reader
		io.Closer
	}{readlimit.Reader(f, limit), f}, nil
}

// readInputFile reads a FILE argument whole ("" or "-" is stdin), at most
// limit bytes.
func readInputFile(env *Env, arg string, limit int64) ([]byte, error) {
	var data []byte
	var err error
	if arg == "" || arg == "-" {
		data, err = readlimit.ReadAll(env.Stdin, limit)
	} else {
		data, err = readlimit.ReadFile(inputPath(env, arg), limit)
	}
	if err != nil {
		if _, ok := readlimit.IsTooLarge(err); ok {
			return nil, tooLarge(arg, limit)
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, &errkind.InputError{Source: arg, Problem: "cannot read the file: " + pathErr(err), Hint: "check the path"}
		}
		return nil, &errkind.InputError{Source: sourceName(arg), Problem: "read failed: " + pathErr(err)}
	}
	return data, nil
}

// tooLarge is the error for an input over its limit.
func tooLarge(arg string, limit int64) error {
	return &errkind.InputError{Source: sourceName(arg), Problem: "more than the limit of " + readlimit.Size(limit) + " for this input", Hint: "give the file itself (not a device or an endless stream); dome reads inputs of this kind up to that size"}
}

func pathErr(err error) string { return readcmd.PathErr(err) }

// canonicalInputError turns a canonicalization error into an InputError that
// names the file and the line, column and byte of the fault. data is the
// input when the caller has it; for a regular file it is re-read.
func canonicalInputError(env *Env, arg string, data []byte, err error) error {
	if t, ok := readlimit.IsTooLarge(err); ok {
		return tooLarge(arg, t.Limit)
	}
	var se *canonical.SyntaxError
	if !errors.As(err, &se) {
		return &errkind.InputError{Source: sourceName(arg), Problem: err.Error()}
	}
	field := fmt.Sprintf("byte offset %d", se.Offset)
	if data == nil && arg != "" && arg != "-" {
		// Re-read the prefix of a regular file only: a FIFO opened again
		// would wait for a writer, a device would give other bytes.
		p := inputPath(env, arg)
		if fi, ferr := os.Stat(p); ferr == nil && fi.Mode().IsRegular() {
			if f, ferr := os.Open(p); ferr == nil {
				buf := make([]byte, min(se.Offset, fi.Size()))
				n, _ := io.ReadFull(f, buf)
				data = buf[:n]
				f.Close()
			}
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
		b, err := readlimit.ReadFile(inputPath(env, flagValue), readlimit.KeySet)
		if err != nil {
			return nil, "", &errkind.InputError{Source: "--trusted " + flagValue, Problem: "cannot read the file: " + pathErr(err), Hint: hint}
		}
		data, source = b, "--trusted "+flagValue
	case env.Getenv("TRUSTED_KEYS_PATH") != "":
		p := env.Getenv("TRUSTED_KEYS_PATH")
		b, err := readlimit.ReadFile(inputPath(env, p), readlimit.KeySet)
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
	data, err := readlimit.ReadFile(inputPath(env, path), readlimit.PrivateKey)
	if err != nil {
		return signing.PrivateKey{}, &errkind.InputError{Source: "--key " + path, Problem: "cannot read the key: " + pathErr(err), Hint: "create one with dome keygen --kid KID --out DIR"}
	}
	key, err := signing.ParsePrivateKey(kid, data)
	if err != nil {
		return signing.PrivateKey{}, &errkind.InputError{Source: "--key " + path, Problem: err.Error(), Hint: "give an unencrypted PKCS#8 PEM Ed25519 key (dome keygen, or openssl genpkey -algorithm ed25519)"}
	}
	return key, nil
}

// writeOutput writes data to --out (writeOutputFile) or to stdout.
func writeOutput(env *Env, out string, data []byte) error {
	if out == "" || out == "-" {
		_, err := env.Stdout.Write(data)
		return err
	}
	return writeOutputFile(env, "--out", inputPath(env, out), data)
}

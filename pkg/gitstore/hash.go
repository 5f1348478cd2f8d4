package gitstore

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// Hash is a SHA-1 object id.
type Hash [20]byte

// ZeroHash is the all-zero id: "no object" (for example a ref that must not exist yet).
var ZeroHash Hash

// String returns the 40-character lowercase hex form.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short returns the first 7 hex characters.
func (h Hash) Short() string { return h.String()[:7] }

// IsZero reports whether h is the zero id.
func (h Hash) IsZero() bool { return h == ZeroHash }

// MarshalText writes the hex form (JSON strings).
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads the 40-hex form.
func (h *Hash) UnmarshalText(b []byte) error {
	p, ok := ParseHash(string(b))
	if !ok {
		return fmt.Errorf("not a full object id: %q", b)
	}
	*h = p
	return nil
}

// ParseHash parses a full 40-hex object id (lower or upper case).
func ParseHash(s string) (Hash, bool) {
	var h Hash
	if len(s) != 40 {
		return h, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, false
	}
	return h, true
}

// IsHex reports whether s is non-empty and only hex digits.
func IsHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Mode is a git tree entry mode.
type Mode uint32

// Tree entry modes, as git writes them.
const (
	ModeDir       Mode = 0o040000
	ModeFile      Mode = 0o100644
	ModeExec      Mode = 0o100755
	ModeSymlink   Mode = 0o120000
	ModeSubmodule Mode = 0o160000
)

// String returns the six-digit octal form git prints ("100644").
func (m Mode) String() string { return fmt.Sprintf("%06o", uint32(m)) }

// IsDir reports whether the entry is a subtree.
func (m Mode) IsDir() bool { return m == ModeDir }

// IsRegular reports whether the entry is a regular (possibly executable) file.
func (m Mode) IsRegular() bool { return m == ModeFile || m == ModeExec }

// ObjectType is the type of a git object.
type ObjectType string

// Object types.
const (
	TypeCommit ObjectType = "commit"
	TypeTree   ObjectType = "tree"
	TypeBlob   ObjectType = "blob"
	TypeTag    ObjectType = "tag"
)

// Errors callers can test with errors.Is.
var (
	ErrNotFound      = errors.New("not found")
	ErrNotRepository = errors.New("not a git repository")
	ErrEmptyRepo     = errors.New("repository has no commits")
	ErrRefChanged    = errors.New("ref changed concurrently")
	ErrRefExists     = errors.New("ref already exists")
)

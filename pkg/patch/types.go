package patch

import (
	"crypto/sha1"

	"fmt"
	"github.com/dome-registry/dome/pkg/gitstore"
	"strconv"
)

// OID is a git object id (SHA-1): the same type as gitstore.Hash, so ids
// pass between the engine and the object store without conversion.
type OID = gitstore.Hash

// ParseOID parses a full 40-digit hex id.
func ParseOID(s string) (OID, bool) { return gitstore.ParseHash(s) }

// BlobID returns the id git gives a blob holding data.
func BlobID(data []byte) OID {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	var o OID
	copy(o[:], h.Sum(nil))
	return o
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

// String returns the six-digit octal form ("100644").
func (m Mode) String() string { return fmt.Sprintf("%06o", uint32(m)) }

// kind is the file type part of a mode (git's S_IFMT).
func (m Mode) kind() Mode {
	switch m {
	case ModeFile, ModeExec:
		return ModeFile
	}
	return m
}

func parseMode(s string) (Mode, bool) {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, false
	}
	switch m := Mode(v); m {
	case ModeFile, ModeExec, ModeSymlink, ModeSubmodule:
		return m, true
	case 0o100664: // old git wrote group-writable files; git reads them as 644
		return ModeFile, true
	}
	return 0, false
}

// TreeEntry is one entry of a git tree object.
type TreeEntry struct {
	Name string
	Mode Mode
	ID   OID
}

// Store is the object database the engine reads base trees from and writes
// results to. pkg/gitstore provides one over a repository (see FromRepo in
// the app layer) and MemStore one in memory.
type Store interface {
	ReadTree(id OID) ([]TreeEntry, error)
	ReadBlob(id OID) ([]byte, error)
	WriteBlob(data []byte) (OID, error)
	WriteTree(entries []TreeEntry) (OID, error)
}

// PrefixResolver is implemented by stores that can find objects from an
// abbreviated id; three-way application needs it to find the preimage blob
// named by a patch's index line.
type PrefixResolver interface {
	ResolvePrefix(hexPrefix string) ([]OID, error)
}

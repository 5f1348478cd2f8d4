package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/zlib"
)

// writeLoose stores an object as git does (object-file.c): zlib of
// "<type> <size>\x00<content>" written to a temporary file in its fan-out
// folder objects/<2 hex>/, made read-only (0444, as git leaves objects) and
// renamed to objects/<2 hex>/<38 hex>. A reader sees the whole object or
// none. It is not fsynced here: SyncObjects does that for the objects a ref
// update is about to publish, once for all of them.
func (o *odb) writeLoose(h Hash, t ObjectType, data []byte) error {
	s := h.String()
	dir := filepath.Join(o.dir, s[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write loose object %s: %w", s, err)
	}
	zw, _ := o.zwpool.Get().(*zlib.Writer)
	if zw == nil {
		zw = zlib.NewWriter(f)
	} else {
		zw.Reset(f)
	}
	defer o.zwpool.Put(zw)
	header := strconv.AppendInt(append([]byte(t), ' '), int64(len(data)), 10)
	if _, err := zw.Write(append(header, 0)); err != nil {
		return fail(err)
	}
	if _, err := zw.Write(data); err != nil {
		return fail(err)
	}
	if err := zw.Close(); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o444); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write loose object %s: %w", s, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, s[2:])); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write loose object %s: %w", s, err)
	}
	return nil
}

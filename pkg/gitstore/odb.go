package gitstore

import (
	"bufio"
	"bytes"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/klauspost/compress/zlib"

	"github.com/dome-registry/dome/pkg/readlimit"
)

// odb is dome's object database: loose objects and memory-mapped
// packfiles with their v2 .idx files, with delta resolution and a small
// cache of delta bases, in the repository's objects/ folder and its
// alternates (objects/info/alternates). go-git decoded every .idx completely
// (and checksummed it) when a repository was opened, which costs
// milliseconds per process on a registry with tens of thousands of objects;
// git itself binary-searches the mapped index, and so does this reader.
type odb struct {
	dir string // the repository's objects/ folder, where new objects go

	// mapMu is held for reading while the mapped memory of packs is in
	// use, and for writing by close, which unmaps it.
	mapMu sync.RWMutex

	mu      sync.Mutex // guards dirs, packs and scanned
	dirs    []string   // dir and its alternates, in search order
	packs   []*pack
	scanned bool

	cacheMu  sync.Mutex                 // guards the LRU cache
	cache    map[cacheKey]*list.Element // of *cachedObject, most recent first
	lru      list.List
	cacheLen int
	budget   int // bytes: cacheBudget, or Repo.LimitCache's

	zpool  sync.Pool // of *inflater: a new zlib reader allocates ~40 KB
	zwpool sync.Pool // of *zlib.Writer, for loose objects: a new one allocates ~1 MB

	keepChains atomic.Bool // cache every object of a resolved delta chain
}

// inflater is a reusable zlib reader with its source.
type inflater struct {
	zr io.ReadCloser
	br bytes.Reader
	bf *bufio.Reader
}

// getInflater returns a zlib reader reset to read src.
func (o *odb) getInflater(src []byte, file io.Reader) (*inflater, io.Reader, error) {
	in, _ := o.zpool.Get().(*inflater)
	if in == nil {
		in = &inflater{}
	}
	var r io.Reader
	if file != nil {
		if in.bf == nil {
			in.bf = bufio.NewReaderSize(file, 4096)
		} else {
			in.bf.Reset(file)
		}
		r = in.bf
	} else {
		in.br.Reset(src)
		r = &in.br
	}
	if in.zr == nil {
		zr, err := zlib.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		in.zr = zr
	} else if err := in.zr.(zlib.Resetter).Reset(r, nil); err != nil {
		return nil, nil, err
	}
	return in, in.zr, nil
}

func (o *odb) putInflater(in *inflater) {
	in.br.Reset(nil)
	if in.bf != nil {
		in.bf.Reset(nil)
	}
	o.zpool.Put(in)
}

// cacheKey names a cached object: a packed one by its pack and offset, a
// loose one by its id alone.
type cacheKey struct {
	p   *pack
	off int64
	id  Hash // loose objects (p nil)
}

type cachedObject struct {
	key  cacheKey
	typ  ObjectType
	data []byte
}

// cacheBudget bounds the bytes kept by the cache of resolved packed objects
// (git's delta_base_cache_limit is 96 MiB): the bases of delta chains and
// the objects asked for, and with KeepDeltaChains every object of a chain;
// and of the loose commits, tags and trees read.
const cacheBudget = 192 << 20

// cacheMaxObject keeps single huge blobs from flushing the cache.
const cacheMaxObject = 16 << 20

type pack struct {
	name   string
	idx    []byte // mapped .idx (version 2)
	data   []byte // mapped .pack
	n      int
	fanout []byte // 256 big-endian uint32s
	names  []byte // n * 20
	offs   []byte // n * 4
	large  []byte // 8 * m
}

func newODB(objectsDir string) *odb {
	return &odb{dir: objectsDir, cache: map[cacheKey]*list.Element{}, budget: cacheBudget}
}

// errNoObject means the object is in none of the loose objects or packs.
var errNoObject = errors.New("object not in the object database")

func (o *odb) scan() error {
	if o.scanned {
		return nil
	}
	o.scanned = true
	o.dirs = append([]string{o.dir}, alternates(o.dir)...)
	have := map[string]bool{}
	for _, p := range o.packs {
		have[p.name] = true
	}
	for _, dir := range o.dirs {
		entries, err := os.ReadDir(filepath.Join(dir, "pack"))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		for _, e := range entries {
			// A pack is named by its checksum: the same name in two folders is the same pack.
			name, ok := strings.CutSuffix(e.Name(), ".idx")
			if !ok || have[name] {
				continue
			}
			p, err := openPack(filepath.Join(dir, "pack", name))
			if err != nil {
				if os.IsNotExist(err) {
					continue // a pack being written or removed by git gc
				}
				return err
			}
			have[name] = true
			o.packs = append(o.packs, p)
		}
	}
	return nil
}

// maxAlternateDepth is how deep git follows alternates of alternates
// (object-file.c link_alt_odb_entries).
const maxAlternateDepth = 5

// alternatesLimit bounds an objects/info/alternates file.
const alternatesLimit = 1 << 20

// alternates lists the object folders objectsDir borrows from, as git
// reads objects/info/alternates: one folder a line, relative to the
// objects folder whose file names it unless absolute, C-quoted when it
// starts with a double quote; empty lines and "#" comments skipped; each
// folder's own alternates followed right after it, to a depth of five;
// folders that do not exist, and ones already listed (loops included), left
// out.
func alternates(objectsDir string) []string {
	var out []string
	seen := map[string]bool{filepath.Clean(objectsDir): true}
	var read func(dir string, depth int)
	read = func(dir string, depth int) {
		if depth > maxAlternateDepth {
			return
		}
		data, err := readlimit.ReadFile(filepath.Join(dir, "info", "alternates"), alternatesLimit)
		if err != nil {
			return // none (or unreadable, which git reports and ignores too)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			if line[0] == '"' {
				unquoted, ok := unquoteC(line)
				if !ok {
					continue
				}
				line = unquoted
			}
			alt := line
			if !filepath.IsAbs(alt) {
				alt = filepath.Join(dir, alt)
			}
			alt = filepath.Clean(alt)
			if seen[alt] {
				continue
			}
			if fi, err := os.Stat(alt); err != nil || !fi.IsDir() {
				continue
			}
			seen[alt] = true
			out = append(out, alt)
			read(alt, depth+1)
		}
	}
	read(objectsDir, 0)
	return out
}

// unquoteC reads a C-style quoted string as git writes paths (quote.c
// unquote_c_style): \" \\ \a \b \f \n \r \t \v and three octal digits.
func unquoteC(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	var b []byte
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return string(b), i == len(s)-1
		case c != '\\':
			b = append(b, c)
			continue
		}
		if i++; i >= len(s) {
			return "", false
		}
		switch c = s[i]; c {
		case '"', '\\':
		case 'a':
			c = '\a'
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'v':
			c = '\v'
		default:
			if i+2 >= len(s) || c < '0' || c > '3' || s[i+1] < '0' || s[i+1] > '7' || s[i+2] < '0' || s[i+2] > '7' {
				return "", false
			}
			c = (c-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0')
			i += 2
		}
		b = append(b, c)
	}
	return "", false
}

// rescan looks for packs added since the last scan (after a fetch or a git gc).
func (o *odb) rescan() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.scanned = false
	return o.scan()
}

func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%s: empty file", path)
	}
	return syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
}

func openPack(base string) (*pack, error) {
	idx, err := mapFile(base + ".idx")
	if err != nil {
		return nil, err
	}
	data, err := mapFile(base + ".pack")
	if err != nil {
		syscall.Munmap(idx)
		return nil, err
	}
	p := &pack{name: filepath.Base(base), idx: idx, data: data}
	fail := func(err error) (*pack, error) {
		syscall.Munmap(idx)
		syscall.Munmap(data)
		return nil, err
	}
	if len(idx) < 8+256*4+40 || !bytes.Equal(idx[:4], []byte{0xff, 't', 'O', 'c'}) || binary.BigEndian.Uint32(idx[4:8]) != 2 {
		return fail(fmt.Errorf("%s.idx: not a version 2 pack index", base))
	}
	if len(data) < 12 || string(data[:4]) != "PACK" {
		return fail(fmt.Errorf("%s.pack: not a packfile", base))
	}
	p.fanout = idx[8 : 8+256*4]
	p.n = int(binary.BigEndian.Uint32(p.fanout[255*4:]))
	namesAt := 8 + 256*4
	crcAt := namesAt + p.n*20
	offsAt := crcAt + p.n*4
	largeAt := offsAt + p.n*4
	if largeAt+40 > len(idx) {
		return fail(fmt.Errorf("%s.idx: truncated", base))
	}
	p.names = idx[namesAt:crcAt]
	p.offs = idx[offsAt:largeAt]
	p.large = idx[largeAt : len(idx)-40]
	return p, nil
}

// find returns the pack offset of h.
func (p *pack) find(h Hash) (int64, bool) {
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(p.fanout[(int(h[0])-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(p.fanout[int(h[0])*4:]))
	i := lo + sort.Search(hi-lo, func(i int) bool { return bytes.Compare(p.names[(lo+i)*20:(lo+i)*20+20], h[:]) >= 0 })
	if i >= hi || !bytes.Equal(p.names[i*20:i*20+20], h[:]) {
		return 0, false
	}
	return p.offset(i), true
}

func (p *pack) offset(i int) int64 {
	off := binary.BigEndian.Uint32(p.offs[i*4:])
	if off&0x80000000 == 0 {
		return int64(off)
	}
	j := int(off & 0x7fffffff)
	if j*8+8 > len(p.large) {
		return -1
	}
	return int64(binary.BigEndian.Uint64(p.large[j*8:]))
}

const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

var packTypes = map[byte]ObjectType{packCommit: TypeCommit, packTree: TypeTree, packBlob: TypeBlob, packTag: TypeTag}

// header parses the object header at off: its pack type, inflated size, the
// delta base (offset or id) and where the compressed data starts.
func (p *pack) header(off int64) (typ byte, size int64, baseOff int64, baseID Hash, dataAt int64, err error) {
	if off < 12 || off >= int64(len(p.data)) {
		return 0, 0, 0, baseID, 0, fmt.Errorf("pack %s: bad offset %d", p.name, off)
	}
	pos := off
	c := p.data[pos]
	pos++
	typ = (c >> 4) & 7
	size = int64(c & 15)
	shift := uint(4)
	for c&0x80 != 0 {
		if pos >= int64(len(p.data)) || shift > 60 {
			return 0, 0, 0, baseID, 0, fmt.Errorf("pack %s: corrupt header at %d", p.name, off)
		}
		c = p.data[pos]
		pos++
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	switch typ {
	case packOfsDelta:
		if pos >= int64(len(p.data)) {
			return 0, 0, 0, baseID, 0, fmt.Errorf("pack %s: corrupt delta at %d", p.name, off)
		}
		c = p.data[pos]
		pos++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if pos >= int64(len(p.data)) {
				return 0, 0, 0, baseID, 0, fmt.Errorf("pack %s: corrupt delta at %d", p.name, off)
			}
			c = p.data[pos]
			pos++
			rel = ((rel + 1) << 7) | int64(c&0x7f)
		}
		baseOff = off - rel
		if baseOff < 12 || baseOff >= off {
			return 0, 0, 0, baseID, 0, fmt.Errorf("pack %s: delta base out of range at %d", p.name, off)
		}
	case packRefDelta:
		if pos+20 > int64(len(p.data)) {
			return 0, 0, 0, baseID, 0, fmt.Errorf("pack %s: corrupt delta at %d", p.name, off)
		}
		copy(baseID[:], p.data[pos:pos+20])
		pos += 20
	case packCommit, packTree, packBlob, packTag:
	default:
		return 0, 0, 0, baseID, 0, fmt.Errorf("pack %s: unknown object type %d at %d", p.name, typ, off)
	}
	return typ, size, baseOff, baseID, pos, nil
}

// maxObject bounds the size of one object dome will inflate (1 GiB).
const maxObject = 1 << 30

func (o *odb) inflate(p *pack, at, size int64) ([]byte, error) {
	if size < 0 || size > maxObject {
		return nil, fmt.Errorf("pack %s: object of %d bytes is too large", p.name, size)
	}
	in, zr, err := o.getInflater(p.data[at:], nil)
	if err != nil {
		return nil, fmt.Errorf("pack %s: inflate at %d: %w", p.name, at, err)
	}
	defer o.putInflater(in)
	buf := make([]byte, size)
	if _, err := io.ReadFull(zr, buf); err != nil {
		return nil, fmt.Errorf("pack %s: inflate at %d: %w", p.name, at, err)
	}
	return buf, nil
}

// snapshot returns the current packs, scanning the pack directory once.
func (o *odb) snapshot() ([]*pack, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.scan(); err != nil {
		return nil, err
	}
	return o.packs, nil
}

// locate finds h in a pack; the caller holds mapMu for reading.
func (o *odb) locate(h Hash) (*pack, int64, bool) {
	packs, err := o.snapshot()
	if err != nil {
		return nil, 0, false
	}
	for _, p := range packs {
		if off, ok := p.find(h); ok {
			return p, off, true
		}
	}
	return nil, 0, false
}

// read returns the type and content of h.
func (o *odb) read(h Hash) (ObjectType, []byte, error) {
	o.mapMu.RLock()
	defer o.mapMu.RUnlock()
	if _, err := o.snapshot(); err != nil {
		return "", nil, err
	}
	if p, off, ok := o.locate(h); ok {
		return o.readPacked(p, off)
	}
	return o.readLoose(h)
}

// hasPacked reports whether h is in a pack.
func (o *odb) hasPacked(h Hash) bool {
	o.mapMu.RLock()
	defer o.mapMu.RUnlock()
	_, _, ok := o.locate(h)
	return ok
}

// order returns the index of the pack holding h and its offset there.
func (o *odb) order(h Hash) (int, int64, bool) {
	o.mapMu.RLock()
	defer o.mapMu.RUnlock()
	packs, err := o.snapshot()
	if err != nil {
		return 0, 0, false
	}
	for i, p := range packs {
		if off, ok := p.find(h); ok {
			return i, off, true
		}
	}
	return 0, 0, false
}

// close unmaps the packs and forgets them (and the objects cached from
// them); a later read maps them again.
func (o *odb) close() error {
	o.mapMu.Lock()
	defer o.mapMu.Unlock()
	o.mu.Lock()
	packs := o.packs
	o.packs, o.dirs, o.scanned = nil, nil, false
	o.mu.Unlock()
	o.dropCache() // its keys name the packs
	var first error
	for _, p := range packs {
		for _, m := range [][]byte{p.idx, p.data} {
			if err := syscall.Munmap(m); err != nil && first == nil {
				first = fmt.Errorf("unmap pack %s: %w", p.name, err)
			}
		}
	}
	return first
}

// readType returns the type of h without inflating delta chains.
func (o *odb) readType(h Hash) (ObjectType, error) {
	o.mapMu.RLock()
	defer o.mapMu.RUnlock()
	if _, err := o.snapshot(); err != nil {
		return "", err
	}
	p, off, ok := o.locate(h)
	if !ok {
		t, _, err := o.readLooseObject(h, true)
		return t, err
	}
	for depth := 0; depth < 10000; depth++ {
		typ, _, baseOff, baseID, _, err := p.header(off)
		if err != nil {
			return "", err
		}
		switch typ {
		case packOfsDelta:
			off = baseOff
		case packRefDelta:
			bp, boff, ok := o.locate(baseID)
			if !ok {
				t, _, err := o.readLooseObject(baseID, true)
				return t, err
			}
			p, off = bp, boff
		default:
			return packTypes[typ], nil
		}
	}
	return "", fmt.Errorf("pack %s: delta chain too long", p.name)
}

// readPacked resolves the object at off: it walks the delta chain down to a
// cached object or a whole one, then applies the deltas bottom up.
//
// The chain's base and the requested object are always cached. Intermediate
// objects are cached only when keepChains is on (a batch of lookups over one
// history walks overlapping chains, and a cached intermediate ends a walk);
// otherwise they are computed in two buffers used in turn. A commit's tree of
// 2,000 tools is ~72 KB and chains run 50 deep: one cold lookup then touches
// 3 buffers instead of 50, which on a VM where a page fault costs ~6 µs is
// most of a cold "dome registry cat".
func (o *odb) readPacked(p *pack, off int64) (ObjectType, []byte, error) {
	if t, data, ok := o.cached(cacheKey{p: p, off: off}); ok {
		return t, data, nil
	}
	type link struct {
		p       *pack
		off, at int64
		size    int64
	}
	var chain []link // deltas, the requested object first
	var bt ObjectType
	var base []byte
	cp, coff := p, off
	for {
		if len(chain) > 10000 {
			return "", nil, fmt.Errorf("pack %s: delta chain too long", p.name)
		}
		if len(chain) > 0 {
			if t, data, ok := o.cached(cacheKey{p: cp, off: coff}); ok {
				bt, base = t, data
				break
			}
		}
		typ, size, baseOff, baseID, at, err := cp.header(coff)
		if err != nil {
			return "", nil, err
		}
		if t, ok := packTypes[typ]; ok {
			data, err := o.inflate(cp, at, size)
			if err != nil {
				return "", nil, err
			}
			// A chain's base is cached, and so is a whole tree: the
			// lookups of one command walk the same folders again
			// (the tool's folder for its tool.json, then for the file).
			if len(chain) > 0 || t == TypeTree {
				o.remember(cacheKey{p: cp, off: coff}, t, data)
			}
			bt, base = t, data
			break
		}
		chain = append(chain, link{cp, coff, at, size})
		if typ == packOfsDelta {
			coff = baseOff
			continue
		}
		if bp, boff, ok := o.locate(baseID); ok {
			cp, coff = bp, boff
			continue
		}
		if bt, base, err = o.readLoose(baseID); err != nil {
			return "", nil, err
		}
		break
	}
	if len(chain) == 0 {
		return bt, base, nil
	}
	keep := o.keepChains.Load()
	var spare []byte // a buffer of ours that no one else sees
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		delta, err := o.inflate(l.p, l.at, l.size)
		if err != nil {
			return "", nil, err
		}
		out, err := applyDelta(spare, base, delta)
		if err != nil {
			return "", nil, fmt.Errorf("pack %s: delta at %d: %w", l.p.name, l.off, err)
		}
		spare = nil
		if i == 0 || keep {
			o.remember(cacheKey{p: l.p, off: l.off}, bt, out)
		} else if i < len(chain)-1 {
			spare = base // an intermediate computed here: free to overwrite
		}
		base = out
	}
	return bt, base, nil
}

// cached returns the object k names if the cache holds it.
func (o *odb) cached(k cacheKey) (ObjectType, []byte, bool) {
	o.cacheMu.Lock()
	defer o.cacheMu.Unlock()
	if el, ok := o.cache[k]; ok {
		o.lru.MoveToFront(el)
		c := el.Value.(*cachedObject)
		return c.typ, c.data, true
	}
	return "", nil, false
}

// dropCache empties the cache of resolved objects.
func (o *odb) dropCache() {
	o.cacheMu.Lock()
	defer o.cacheMu.Unlock()
	o.cache = map[cacheKey]*list.Element{}
	o.lru.Init()
	o.cacheLen = 0
}

// remember keeps a resolved object, evicting the least recently used ones
// beyond the budget. Callers must not modify cached slices.
func (o *odb) remember(k cacheKey, t ObjectType, data []byte) {
	if len(data) > min(cacheMaxObject, o.budget/4) {
		return
	}
	o.cacheMu.Lock()
	defer o.cacheMu.Unlock()
	if el, have := o.cache[k]; have {
		o.lru.MoveToFront(el)
		return
	}
	o.cache[k] = o.lru.PushFront(&cachedObject{k, t, data})
	o.cacheLen += len(data)
	for o.cacheLen > o.budget {
		last := o.lru.Back()
		c := last.Value.(*cachedObject)
		o.lru.Remove(last)
		delete(o.cache, c.key)
		o.cacheLen -= len(c.data)
	}
}

func deltaVarint(d []byte, pos int) (int, int, error) {
	v, shift := 0, uint(0)
	for {
		if pos >= len(d) || shift > 56 {
			return 0, 0, errors.New("truncated delta header")
		}
		c := d[pos]
		pos++
		v |= int(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			return v, pos, nil
		}
	}
}

// applyDelta applies a git delta (copy and insert instructions) to base,
// writing into dst's storage when it is large enough (dst must not overlap
// base).
func applyDelta(dst, base, delta []byte) ([]byte, error) {
	srcSize, pos, err := deltaVarint(delta, 0)
	if err != nil {
		return nil, err
	}
	if srcSize != len(base) {
		return nil, fmt.Errorf("delta expects a base of %d bytes, have %d", srcSize, len(base))
	}
	dstSize, pos, err := deltaVarint(delta, pos)
	if err != nil {
		return nil, err
	}
	if dstSize > maxObject {
		return nil, errors.New("delta result too large")
	}
	out := dst[:0]
	if cap(out) < dstSize {
		out = make([]byte, 0, dstSize)
	}
	for pos < len(delta) {
		op := delta[pos]
		pos++
		switch {
		case op&0x80 != 0:
			var off, n int
			for i := 0; i < 4; i++ {
				if op&(1<<i) != 0 {
					if pos >= len(delta) {
						return nil, errors.New("truncated copy instruction")
					}
					off |= int(delta[pos]) << (8 * i)
					pos++
				}
			}
			for i := 0; i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if pos >= len(delta) {
						return nil, errors.New("truncated copy instruction")
					}
					n |= int(delta[pos]) << (8 * i)
					pos++
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > len(base) || off+n < off {
				return nil, errors.New("copy instruction outside the base")
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			if pos+int(op) > len(delta) {
				return nil, errors.New("truncated insert instruction")
			}
			out = append(out, delta[pos:pos+int(op)]...)
			pos += int(op)
		default:
			return nil, errors.New("reserved delta instruction 0")
		}
	}
	if len(out) != dstSize {
		return nil, fmt.Errorf("delta produced %d bytes, want %d", len(out), dstSize)
	}
	return out, nil
}

// objectDirs returns the objects folder and its alternates.
func (o *odb) objectDirs() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.scan(); err != nil || len(o.dirs) == 0 {
		return []string{o.dir}
	}
	return o.dirs
}

// hasLoose reports whether h is a loose object here or in an alternate.
func (o *odb) hasLoose(h Hash) bool {
	s := h.String()
	for _, dir := range o.objectDirs() {
		if _, err := os.Lstat(filepath.Join(dir, s[:2], s[2:])); err == nil {
			return true
		}
	}
	return false
}

// readLoose reads objects/ab/cdef...: zlib("<type> <size>\x00<data>"),
// from the first objects folder (the repository's, then its alternates)
// that has it.
func (o *odb) readLoose(h Hash) (ObjectType, []byte, error) { return o.readLooseObject(h, false) }

// readLooseObject reads a loose object, or only its type (data nil) when
// typeOnly: a revision is peeled by its type before it is read whole.
//
// Loose commits, tags and trees are cached, as whole trees from packs are:
// a command reads the commit it peeled, and walks the root tree once to
// find the registry and again to find the tool. And a small one is read
// whole even when typeOnly: the inflater builds the tables of the object's
// first zlib block before it yields the first byte of the header, so the
// rest costs little more, and opening and inflating it again to read it
// would cost that all over.
func (o *odb) readLooseObject(h Hash, typeOnly bool) (ObjectType, []byte, error) {
	if t, data, ok := o.cached(cacheKey{id: h}); ok {
		return t, data, nil
	}
	s := h.String()
	var f *os.File
	for _, dir := range o.objectDirs() {
		var err error
		if f, err = os.Open(filepath.Join(dir, s[:2], s[2:])); err == nil {
			break
		}
		if !os.IsNotExist(err) {
			return "", nil, err
		}
	}
	if f == nil {
		return "", nil, errNoObject
	}
	defer f.Close()
	in, zr, err := o.getInflater(nil, f)
	if err != nil {
		return "", nil, fmt.Errorf("loose object %s: %w", s, err)
	}
	defer o.putInflater(in)
	br := make([]byte, 0, 32)
	one := make([]byte, 1)
	for len(br) < 40 {
		if _, err := io.ReadFull(zr, one); err != nil {
			return "", nil, fmt.Errorf("loose object %s: %w", s, err)
		}
		if one[0] == 0 {
			break
		}
		br = append(br, one[0])
	}
	typ, sizeStr, ok := strings.Cut(string(br), " ")
	size, err := strconv.ParseInt(sizeStr, 10, 64)
	if !ok || err != nil || size < 0 || size > maxObject {
		return "", nil, fmt.Errorf("loose object %s: bad header %q", s, br)
	}
	t := ObjectType(typ)
	switch t {
	case TypeCommit, TypeTree, TypeBlob, TypeTag:
	default:
		if typeOnly {
			return "", nil, fmt.Errorf("loose object %s: unknown type %q", s, typ)
		}
		t = ""
	}
	if typeOnly && (t == TypeBlob || size > looseTypeReadLimit) {
		return t, nil, nil
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(zr, data); err != nil {
		if typeOnly {
			return t, nil, nil // the read that wants the data reports it
		}
		return "", nil, fmt.Errorf("loose object %s: %w", s, err)
	}
	if t == "" {
		return "", nil, fmt.Errorf("loose object %s: unknown type %q", s, typ)
	}
	if t != TypeBlob {
		o.remember(cacheKey{id: h}, t, data)
	}
	return t, data, nil
}

// looseTypeReadLimit is the largest loose commit, tag or tree read whole
// when only its type is asked for.
const looseTypeReadLimit = 64 << 10

// prefixed returns the ids in packs and loose objects that start with the
// given hex prefix.
func (o *odb) prefixed(hexPrefix string) ([]Hash, error) {
	o.mapMu.RLock()
	defer o.mapMu.RUnlock()
	packs, err := o.snapshot()
	if err != nil {
		return nil, err
	}
	seen := map[Hash]bool{}
	var out []Hash
	add := func(h Hash) {
		if !seen[h] && strings.HasPrefix(h.String(), hexPrefix) {
			seen[h] = true
			out = append(out, h)
		}
	}
	first := unhex(hexPrefix[0]) << 4
	if len(hexPrefix) > 1 {
		first |= unhex(hexPrefix[1])
	}
	for _, p := range packs {
		lo, hi := 0, p.n
		if len(hexPrefix) >= 2 {
			if first > 0 {
				lo = int(binary.BigEndian.Uint32(p.fanout[(int(first)-1)*4:]))
			}
			hi = int(binary.BigEndian.Uint32(p.fanout[int(first)*4:]))
		}
		for i := lo; i < hi; i++ {
			var h Hash
			copy(h[:], p.names[i*20:])
			add(h)
		}
	}
	dirs := []string{}
	if len(hexPrefix) >= 2 {
		dirs = append(dirs, hexPrefix[:2])
	} else {
		for c := 0; c < 16; c++ {
			dirs = append(dirs, hexPrefix+strconv.FormatInt(int64(c), 16))
		}
	}
	for _, objects := range o.objectDirs() {
		for _, d := range dirs {
			es, err := os.ReadDir(filepath.Join(objects, d))
			if err != nil {
				continue
			}
			for _, e := range es {
				if h, ok := ParseHash(d + e.Name()); ok {
					add(h)
				}
			}
		}
	}
	return out, nil
}

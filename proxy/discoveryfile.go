package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// The discovery cache's files: one per server, named after its key,
// written whole (a temporary file renamed over the old one), mode 0600 in a
// directory of mode 0700, and read only when they are what mcpgate wrote:
// a regular file of this user's, not through a symbolic link, within a
// size bound, of this format and for this key, every list parsing as the
// server's answer would. Anything else is ignored with one warning, and
// replaced by the next write. The directory may be shared (cache_dir):
// what others put there is never followed, trusted or written through.

// discoveryFormat names the file format; a file of another is ignored.
const discoveryFormat = "mcpgate-discovery/1"

// maxDiscoveryFile bounds a cache file, read or written: a server whose
// lists are larger is simply not cached.
const maxDiscoveryFile = 32 << 20

// run writes the files that are behind until ctx ends, then once more.
// Writing is off the request path: a list is answered before its file is
// written.
func (d *discoveryCache) run(ctx context.Context) {
	if !d.on() {
		return
	}
	for {
		select {
		case <-d.wake:
			d.flush()
		case <-ctx.Done():
			d.flush()
			return
		}
	}
}

// flush writes every file that is behind.
func (d *discoveryCache) flush() {
	type pending struct {
		key  string
		data []byte
	}
	var todo []pending
	d.mu.Lock()
	for key := range d.dirty {
		todo = append(todo, pending{key, d.entries[key].encode(key)})
	}
	clear(d.dirty)
	d.mu.Unlock()
	for _, p := range todo {
		if err := d.write(p.key, p.data); err != nil {
			// Once per run: the cause is usually the directory, the same for all.
			d.warnOnce(d.dir, "discovery cache: cannot write; starts are not sped up (fix the directory's permissions, set cache_dir, or say \"cache\": false)", "file", d.path(p.key), "err", err)
		}
	}
}

// write replaces a file atomically: a reader sees the old file or the new,
// never a part. The temporary file is created anew (O_EXCL), mode 0600;
// renaming over a symbolic link replaces the link, never what it points to.
func (d *discoveryCache) write(key string, data []byte) error {
	path := d.path(key)
	if len(data) > maxDiscoveryFile {
		os.Remove(path) // what it holds is older than what could not be written
		d.mu.Lock()
		warn := !d.badSize[key]
		d.badSize[key] = true
		d.mu.Unlock()
		if warn {
			d.log.Warn("discovery cache: a server's lists are too large to cache; its starts are not sped up", "file", path, "bytes", len(data), "limit", maxDiscoveryFile)
		}
		return nil
	}
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.dir, key+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// read loads one server's file; nil when there is none or it is not to be
// trusted (then with one warning, and the next write replaces it).
func (d *discoveryCache) read(key string) *discoveryEntry {
	path := d.path(key)
	data, err := readOwnFile(path, maxDiscoveryFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		var e *discoveryEntry
		if e, err = decodeDiscoveryEntry(data, key, d.ttl); err == nil {
			return e
		}
	}
	d.warnOnce(key, "discovery cache: ignoring a server's file; it is replaced when the server next answers", "file", path, "reason", err)
	return nil
}

func (d *discoveryCache) warnOnce(key, msg string, args ...any) {
	d.mu.Lock()
	first := !d.warned[key]
	d.warned[key] = true
	d.mu.Unlock()
	if first {
		d.log.Warn(msg, args...)
	}
}

// errSymlink is a cache file that is a symbolic link: mcpgate never makes
// one, so someone else did.
var errSymlink = errors.New("a symbolic link, which mcpgate never makes: not followed (remove it)")

// errNotOwn is a cache file that mcpgate did not write.
var errNotOwn = errors.New("not a regular file owned by this user: a file mcpgate did not write (remove it)")

// readOwnFile reads a file this user owns, refusing a symbolic link and
// anything larger than limit.
func readOwnFile(path string, limit int64) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || !ownedByMe(fi) {
		return nil, errNotOwn
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%d bytes, over the limit of %d", fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("over the limit of %d bytes", limit)
	}
	return data, err
}

// discoveryFile is a cache file as read. Its items stay raw: they are
// parsed as a list page when served.
type discoveryFile struct {
	Format string `json:"format"`
	Key    string `json:"key"`
	Server string `json:"server"`
	Init   *struct {
		At     time.Time       `json:"at"`
		Result json.RawMessage `json:"result"`
	} `json:"init"`
	Lists map[string]struct {
		Fetched time.Time       `json:"fetched"`
		Expires time.Time       `json:"expires"`
		Items   json.RawMessage `json:"items"`
	} `json:"lists"`
}

// decodeDiscoveryEntry checks and decodes a file for key. Every list must
// parse as the server's answer would; expiries are held to ttl, which may
// have been lowered since the file was written.
func decodeDiscoveryEntry(data []byte, key string, ttl time.Duration) (*discoveryEntry, error) {
	var f discoveryFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a cache file: %v", err)
	}
	if f.Format != discoveryFormat {
		return nil, fmt.Errorf("format %q, not %q (another mcpgate version's)", f.Format, discoveryFormat)
	}
	if f.Key != key {
		return nil, errors.New("written for another server entry")
	}
	e := &discoveryEntry{server: f.Server}
	if f.Init != nil {
		var init initializeResult
		if err := json.Unmarshal(f.Init.Result, &init); err != nil {
			return nil, fmt.Errorf("init.result: %v", err)
		}
		e.init, e.initAt = f.Init.Result, f.Init.At
	}
	for name, l := range f.Lists {
		k, ok := kindOfKey(name)
		if !ok {
			return nil, fmt.Errorf("lists: unknown list %q", name)
		}
		if _, _, err := parseListPage(wrapItems(k, l.Items), k); err != nil {
			return nil, fmt.Errorf("lists.%s: %v", name, err)
		}
		e.lists[k] = cachedList{items: l.Items, fetched: l.Fetched, expires: l.Expires}
		if limit := l.Fetched.Add(ttl); l.Expires.After(limit) {
			e.lists[k].expires = limit
		}
	}
	return e, nil
}

func kindOfKey(name string) (kind, bool) {
	for k := range numKinds {
		if kinds[k].key == name {
			return k, true
		}
	}
	return 0, false
}

// encode writes the entry as a file. It is put together by hand so that
// the items are kept byte for byte (encoding/json would compact and
// escape them, and the live list would then differ from the cached one
// where nothing changed).
func (e *discoveryEntry) encode(key string) []byte {
	b := []byte(`{"format":`)
	b = append(b, quote(discoveryFormat)...)
	b = append(b, `,"key":`...)
	b = append(b, quote(key)...)
	b = append(b, `,"server":`...)
	b = append(b, quote(e.server)...)
	if e.init != nil {
		b = append(b, `,"init":{"at":`...)
		b = append(b, mustJSON(e.initAt)...)
		b = append(b, `,"result":`...)
		b = append(b, e.init...)
		b = append(b, '}')
	}
	b = append(b, `,"lists":{`...)
	first := true
	for k, l := range e.lists {
		if l.items == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, quote(kinds[k].key)...)
		b = append(b, `:{"fetched":`...)
		b = append(b, mustJSON(l.fetched)...)
		b = append(b, `,"expires":`...)
		b = append(b, mustJSON(l.expires)...)
		b = append(b, `,"items":`...)
		b = append(b, l.items...)
		b = append(b, '}')
	}
	return append(b, "}}\n"...)
}

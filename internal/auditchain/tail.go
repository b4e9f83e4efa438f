package auditchain

import (
	"bytes"
	"encoding/json"
	"io"
)

// What a file's first lines say of it.
type start int

const (
	startEmpty     start = iota // nothing in it
	startHeader                 // a header: the file is a chain
	startFragments              // only what cut writes left: its header is still to come
	startForeign                // something else: not a chain (an older mcpgate's trail)
)

// headReadLimit bounds how much of a file's start is read to find its
// header; a header line is a few hundred bytes.
const headReadLimit = 64 << 10

// readStart finds a file's header: the first whole line, after any
// fragments. end is where the header line ends, its newline included.
func readStart(r io.ReaderAt, size int64) (h Header, end int64, s start, err error) {
	if size == 0 {
		return Header{}, 0, startEmpty, nil
	}
	buf := make([]byte, min(size, headReadLimit))
	if _, err := r.ReadAt(buf, 0); err != nil && err != io.EOF {
		return Header{}, 0, startForeign, err
	}
	off := 0
	for {
		i := bytes.IndexByte(buf[off:], '\n')
		if i < 0 {
			rest := buf[off:]
			if size <= headReadLimit && (len(rest) == 0 || looksLikeFragment(rest)) {
				return Header{}, 0, startFragments, nil
			}
			return Header{}, 0, startForeign, nil
		}
		line := buf[off : off+i]
		off += i + 1
		if json.Valid(line) {
			if h, ok := parseHeader(line); ok {
				return h, int64(off), startHeader, nil
			}
			return Header{}, 0, startForeign, nil
		}
		if !looksLikeFragment(line) {
			return Header{}, 0, startForeign, nil
		}
	}
}

// tailReadLimit bounds how much of a file's end is read to find its last
// record: a record with bodies is as large as two messages, each up to
// max_message_bytes.
const tailReadLimit = 128 << 20

// lastRecord finds the last whole record of a file, whose hash the next
// line links to. Fragments after it are skipped; a record whose newline
// was cut off still counts (it is whole). ok is false when there is none
// within tailReadLimit of the end.
func lastRecord(r io.ReaderAt, size int64) (hash string, ok bool, err error) {
	for chunk := int64(64 << 10); ; chunk *= 2 {
		from := max(0, size-chunk)
		buf := make([]byte, size-from)
		if _, err := r.ReadAt(buf, from); err != nil && err != io.EOF {
			return "", false, err
		}
		whole := buf
		if from > 0 { // the first line may begin before the chunk
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				whole = nil
			} else {
				whole = buf[i+1:]
			}
		}
		for end := len(whole); end > 0; {
			if whole[end-1] == '\n' {
				end--
			}
			begin := bytes.LastIndexByte(whole[:end], '\n') + 1
			line := whole[begin:end]
			if _, chained := Prev(line); chained && json.Valid(line) {
				return Hash(line), true, nil
			}
			end = begin
		}
		if from == 0 || chunk >= tailReadLimit {
			return "", false, nil
		}
	}
}

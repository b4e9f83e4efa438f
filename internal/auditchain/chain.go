// Package auditchain keeps mcpgate's audit trail tamper-evident: a file of
// JSON lines in which each line carries the SHA-256 of the line before it,
// so that a line changed, removed, added or moved breaks the chain at the
// line after it.
//
// A Writer appends records (Open for a file, NewStream for anything else);
// Verify checks one file or a rotated series and says where the chain
// breaks. The format:
//
//	{"prev":"<sha256 hex of the previous line>",<the record's own members>}
//
// The hash is over the previous line's exact bytes, without its newline.
// prev is always the first member, so that a tool reads it without parsing
// the record, and a line cut short is recognisable as a prefix of a record.
// The first line of every file is a header record (see Header): its prev is
// the hash of the last line of the file before it (Genesis for the first
// file ever), so the chain runs on through every rotation.
//
// A write cut short (a full disk; mcpgate killed in the middle of it)
// leaves a fragment: a line that is not valid JSON. The chain goes on from
// the last whole record, skipping the fragment, and Verify accepts it only
// as what a cut write leaves (a prefix of a record linked to the record
// before it); it is not a record, and jq -R 'fromjson?' skips it too.
package auditchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Genesis is the prev of the header of the first file of a chain: nothing
// came before it.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// prevOpen starts every line.
const prevOpen = `{"prev":"`

// hashLen is the length of a hash in hex.
const hashLen = 2 * sha256.Size

// Hash is the hash by which the next line links to line: SHA-256, in hex,
// of its bytes without the newline.
func Hash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Link returns record, a JSON object with no newline in it and no "prev"
// member, as the line that follows the line hashing to prev.
func Link(prev string, record []byte) []byte {
	if len(record) < 2 || record[0] != '{' || record[len(record)-1] != '}' || bytes.IndexByte(record, '\n') >= 0 {
		panic(fmt.Sprintf("auditchain.Link: not a JSON object on one line: %.40q", record))
	}
	line := make([]byte, 0, len(prevOpen)+len(prev)+2+len(record))
	line = append(line, prevOpen...)
	line = append(line, prev...)
	line = append(line, '"')
	if len(bytes.TrimSpace(record[1:len(record)-1])) > 0 {
		line = append(line, ',')
	}
	return append(line, record[1:]...)
}

// Prev returns the hash a line links to, if it starts as a chained line does.
func Prev(line []byte) (string, bool) {
	end := len(prevOpen) + hashLen
	if len(line) < end+2 || !bytes.HasPrefix(line, []byte(prevOpen)) || line[end] != '"' || (line[end+1] != ',' && line[end+1] != '}') {
		return "", false
	}
	h := line[len(prevOpen):end]
	if !isHex(h) {
		return "", false
	}
	return string(h), true
}

// isFragmentOf reports whether fragment is what a cut write of a line
// linked to prev leaves: a prefix of the line, or the line's start with
// more after it (a line is never valid JSON without its end).
func isFragmentOf(fragment []byte, prev string) bool {
	start := prevOpen + prev + `"`
	n := min(len(fragment), len(start))
	return n > 0 && string(fragment[:n]) == start[:n]
}

// looksLikeFragment reports whether fragment could be what a cut write left,
// whatever prev the line had: it starts as a chained line does, as far as
// it goes.
func looksLikeFragment(fragment []byte) bool {
	if len(fragment) == 0 {
		return false
	}
	n := min(len(fragment), len(prevOpen))
	if string(fragment[:n]) != prevOpen[:n] {
		return false
	}
	h := fragment[n:min(len(fragment), len(prevOpen)+hashLen)]
	return isHex(h)
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

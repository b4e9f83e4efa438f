package rawjson

import "bytes"

// MayHoldKey reports whether data, a JSON text, may hold a member named by
// quotedKey (the key with its quotes, written plainly): true when the key
// is there as written, or when data holds an escape that could spell it
// another way ("\u005f", "\/"), for the split to decide. False means the
// key is certainly absent, found without parsing data. A "\\" is no escape
// of a key, so a path full of backslashes does not cost a parse.
func MayHoldKey(data, quotedKey []byte) bool {
	if bytes.Contains(data, quotedKey) {
		return true
	}
	for rest := data; ; {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 || i+1 == len(rest) {
			return false
		}
		if c := rest[i+1]; c == 'u' || c == '/' {
			return true
		}
		rest = rest[i+2:] // past the escape, whatever it is ("\\" included)
	}
}

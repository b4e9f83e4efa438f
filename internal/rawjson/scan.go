package rawjson

import "errors"

// The validating scanner: one pass over a message both checks that it is
// JSON (the grammar encoding/json's Valid accepts, its nesting limit
// included) and splits the top-level object. It replaced json.Valid
// followed by a split, which read every message twice; on the path of
// every relayed message that second pass was an eighth of the gateway's
// CPU. Invalid input is left to the slow path (membersSlow), which says
// where and why, and returns what it read before.

// maxDepth is encoding/json's nesting limit: deeper input is not valid
// for json.Valid, so not for us either.
const maxDepth = 10000

// errInvalid is what the scanner knows of invalid input: the slow path
// says more.
var errInvalid = errors.New("invalid JSON")

// Valid reports whether b is one JSON value, as json.Valid does, without
// allocating.
func Valid(b []byte) bool {
	end, err := scanValue(b, skipSpace(b, 0), 0)
	return err == nil && skipSpace(b, end) == len(b)
}

// splitValidating splits the object obj, checking that it is valid JSON as
// it goes. When nested names a member whose value is an object, that
// object is split too (in the same pass): the params of a request, read by
// whoever serves it. It fails with errInvalid on anything json.Valid
// rejects, and on a duplicate key.
func splitValidating(obj []byte, nested string) (ms, inner MemberList, err error) {
	return splitValidatingInto(nil, nil, obj, nested)
}

// splitValidatingInto is splitValidating with the object's members in
// into's array when they fit, and the nested object's in innerInto's (see
// MembersNestedIntoBoth).
func splitValidatingInto(into, innerInto MemberList, obj []byte, nested string) (ms, inner MemberList, err error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, nil, errInvalid
	}
	end, err := scanObject(obj, i, 0, 1, &ms, into, nested, &inner, innerInto)
	if err != nil {
		return ms, nil, err
	}
	if skipSpace(obj, end) != len(obj) {
		return ms, nil, errInvalid
	}
	return ms, inner, nil
}

// scanObject splits the object at obj[i] into *ms, validating it, and
// returns the index just past it. depth is the object's own nesting depth;
// base is where the object starts, which member offsets are counted from.
//
// The members are gathered on the stack and *ms gets them in a list of
// their size (also when the object turns out invalid, for the caller to
// read an id from): a list of room for eight was two thirds empty for a
// message's envelope and its params, and the collector paid for it on
// every message.
//
// into, if not nil, is the array *ms gets when they fit in it.
func scanObject(obj []byte, i, base, depth int, ms *MemberList, into MemberList, nested string, inner *MemberList, innerInto MemberList) (int, error) {
	var small [8]Member
	list := MemberList(small[:0])
	end, err := 0, error(errInvalid) // until the closing brace
	var seen keySet
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		end, err = i+1, nil
	}
	for err != nil {
		if i >= len(obj) || obj[i] != '"' {
			break
		}
		keyEnd, escaped := scanString(obj, i)
		if keyEnd < 0 {
			break
		}
		key, kerr := internKey(obj[i:keyEnd], escaped)
		if kerr != nil {
			break
		}
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			break
		}
		i = skipSpace(obj, i+1)
		var vend int
		var verr error
		if nested != "" && key == nested && i < len(obj) && obj[i] == '{' && inner != nil {
			vend, verr = scanObject(obj, i, i, depth+1, inner, innerInto, "", nil, nil)
			if verr != nil && verr != errInvalid {
				// A duplicate inside is for whoever reads the nested
				// object to report (invalid params), not a broken message.
				*inner = nil
				vend, verr = scanValue(obj, i, depth)
			}
		} else {
			vend, verr = scanValue(obj, i, depth)
		}
		if verr != nil {
			err = verr
			break
		}
		if seen.repeated(list, key) {
			err = &DuplicateError{Key: key}
			break
		}
		list = append(list, Member{Key: key, Value: obj[i:vend:vend], Start: i - base})
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			break
		}
		if obj[i] == '}' {
			end, err = i+1, nil
		} else if obj[i] != ',' {
			break
		}
		i = skipSpace(obj, i+1)
	}
	if into == nil {
		into = make(MemberList, 0, len(list))
	}
	*ms = append(into[:0], list...)
	if err != nil {
		return 0, err
	}
	return end, nil
}

// scanValue validates the value at b[i] and returns the index just past
// it. depth is the nesting depth of the container it is in. Containers
// are walked with an explicit stack, not by recursion: ten thousand
// levels must not grow the goroutine's stack.
func scanValue(b []byte, i, depth int) (int, error) {
	// stack holds, for each open container, whether it is an object.
	var small [32]bool
	stack := small[:0]
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return 0, errInvalid
		}
		switch c := b[i]; {
		case c == '"':
			end, _ := scanString(b, i)
			if end < 0 {
				return 0, errInvalid
			}
			i = end
		case c == '{' || c == '[':
			if depth+len(stack)+1 > maxDepth {
				return 0, errInvalid
			}
			stack = append(stack, c == '{')
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == closer(c == '{') {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i = objectKey(b, i); i < 0 {
					return 0, errInvalid
				}
			}
			continue
		case c == '-' || c >= '0' && c <= '9':
			if i = scanNumber(b, i); i < 0 {
				return 0, errInvalid
			}
		case c == 't':
			if i = literal(b, i, "true"); i < 0 {
				return 0, errInvalid
			}
		case c == 'f':
			if i = literal(b, i, "false"); i < 0 {
				return 0, errInvalid
			}
		case c == 'n':
			if i = literal(b, i, "null"); i < 0 {
				return 0, errInvalid
			}
		default:
			return 0, errInvalid
		}
		// A value ended at b[i]: close what it completes, or go on to
		// the next element or member.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return 0, errInvalid
			}
			inObject := stack[len(stack)-1]
			if b[i] == closer(inObject) {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return 0, errInvalid
			}
			i = skipSpace(b, i+1)
			if inObject {
				if i = objectKey(b, i); i < 0 {
					return 0, errInvalid
				}
			}
			break
		}
	}
}

func closer(object bool) byte {
	if object {
		return '}'
	}
	return ']'
}

// objectKey reads `"key" :` at b[i] and returns where the value starts,
// or -1.
func objectKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	end, _ := scanString(b, i)
	if end < 0 {
		return -1
	}
	i = skipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber validates the number at b[i] (JSON's grammar: no leading
// zeros, no leading '+', digits on both sides of '.') and returns the
// index past it, or -1.
func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// scanString validates the string literal at b[i] and returns the index
// just past its closing quote (-1 if it is not a valid literal), and
// whether it holds an escape. Bytes that are not UTF-8 are accepted, as
// json.Valid accepts them (decoding makes them U+FFFD). It is
// Incremental's stringRest (its fast paths: long runs, dense escapes) on
// a string that must be whole.
func scanString(b []byte, i int) (end int, escaped bool) {
	end, more, escaped := stringRest(b, i+1)
	if end < 0 || more {
		return -1, false
	}
	return end, escaped
}

// escapeEnd checks the escape at b[i] (a backslash) and returns the index
// just past it; -1 if it is not a valid escape; with cut, b ends inside
// it, and what there is of it is valid so far.
func escapeEnd(b []byte, i int) (end int, cut bool) {
	if i+1 >= len(b) {
		return i, true
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, false
	case 'u':
		if i+6 > len(b) {
			if !hex4(b[i+2:]) { // the digits so far
				return -1, false
			}
			return i, true
		}
		if !hex4(b[i+2 : i+6]) {
			return -1, false
		}
		return i + 6, false
	}
	return -1, false
}

func hex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// internKey returns the key the literal lit stands for. The keys of
// JSON-RPC and MCP envelopes come back as constants, so that splitting a
// message allocates no string per member; others are copied, and escaped
// ones decoded.
func internKey(lit []byte, escaped bool) (string, error) {
	if escaped {
		return Unquote(lit)
	}
	raw := lit[1 : len(lit)-1]
	switch string(raw) { // compiled to comparisons: no allocation
	case "jsonrpc":
		return "jsonrpc", nil
	case "id":
		return "id", nil
	case "method":
		return "method", nil
	case "params":
		return "params", nil
	case "result":
		return "result", nil
	case "error":
		return "error", nil
	case "code":
		return "code", nil
	case "message":
		return "message", nil
	case "data":
		return "data", nil
	case "name":
		return "name", nil
	case "arguments":
		return "arguments", nil
	case "_meta":
		return "_meta", nil
	case "progressToken":
		return "progressToken", nil
	case "uri":
		return "uri", nil
	case "content":
		return "content", nil
	case "contents":
		return "contents", nil
	case "structuredContent":
		return "structuredContent", nil
	case "isError":
		return "isError", nil
	case "type":
		return "type", nil
	case "text":
		return "text", nil
	case "cursor":
		return "cursor", nil
	case "nextCursor":
		return "nextCursor", nil
	case "tools":
		return "tools", nil
	case "requestId":
		return "requestId", nil
	case "progress":
		return "progress", nil
	case "total":
		return "total", nil
	// The members of list items: a list of thousands copies none of them.
	case "title":
		return "title", nil
	case "version": // a modern request's clientInfo, on every request
		return "version", nil
	case "description":
		return "description", nil
	case "inputSchema":
		return "inputSchema", nil
	case "outputSchema":
		return "outputSchema", nil
	case "annotations":
		return "annotations", nil
	case "icons":
		return "icons", nil
	case "uriTemplate":
		return "uriTemplate", nil
	case "mimeType":
		return "mimeType", nil
	case "size":
		return "size", nil
	// The modern envelope's, in every request of MCP 2026-07-28.
	case "io.modelcontextprotocol/protocolVersion":
		return "io.modelcontextprotocol/protocolVersion", nil
	case "io.modelcontextprotocol/clientCapabilities":
		return "io.modelcontextprotocol/clientCapabilities", nil
	case "io.modelcontextprotocol/clientInfo":
		return "io.modelcontextprotocol/clientInfo", nil
	}
	// Bytes that are not UTF-8 become U+FFFD, as json.Unmarshal would
	// make them.
	for _, c := range raw {
		if c >= 0x80 {
			return Unquote(lit)
		}
	}
	return string(raw), nil
}

package injection

import "encoding/json"

// objectName returns the "name" member of definition when it is a valid
// JSON object: the last such member, as encoding/json's map keeps it, and
// "" when that is not a string. False when definition is not a valid JSON
// object: Check then decodes it as it did, for encoding/json's error.
//
// Check decoded every definition into a map of its members only to read
// the name: a copy of the definition and a map, 1.3 KB of garbage a tool
// of a gateway's first list, where this reads the top level in place.
func objectName(definition []byte) (string, bool) {
	if !json.Valid(definition) {
		return "", false
	}
	b := definition
	i := skipJSONSpace(b, 0)
	if b[i] != '{' {
		return "", false
	}
	name := ""
	for i = skipJSONSpace(b, i+1); b[i] == '"'; {
		end := closingQuote(b, i+1)
		key, err := jsonString(b[i : end+1])
		if err != nil {
			return "", false
		}
		i = skipJSONSpace(b, end+1) + 1 // past the ':'
		i = skipJSONSpace(b, i)
		valueEnd := skipJSONValue(b, i)
		if key == "name" {
			name = ""
			if b[i] == '"' {
				if name, err = jsonString(b[i:valueEnd]); err != nil {
					return "", false
				}
			}
		}
		i = skipJSONSpace(b, valueEnd)
		if b[i] == ',' {
			i = skipJSONSpace(b, i+1)
		}
	}
	return name, true
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipJSONValue returns the end of the valid JSON value at b[i].
func skipJSONValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return closingQuote(b, i+1) + 1
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = closingQuote(b, i+1)
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && !jsonValueEnds(b[i]) {
		i++
	}
	return i
}

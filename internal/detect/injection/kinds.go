package injection

import (
	"fmt"
	"slices"
	"strings"
)

// The kinds of finding. Names are stable: they appear in [REDACTED:<kind>]
// and in audit records.
const (
	KindInstructionOverride  = "instruction_override"
	KindRoleTag              = "role_tag"
	KindConcealment          = "concealment"
	KindHiddenUnicode        = "hidden_unicode"
	KindTagSmuggling         = "tag_smuggling"
	KindBidiControl          = "bidi_control"
	KindEncodedPayload       = "encoded_payload"
	KindSecretAccess         = "secret_access"
	KindCrossToolInstruction = "cross_tool_instruction"
	KindShadowing            = "shadowing"
	KindPhraseFlood          = "phrase_flood"
)

// Kind describes one kind of finding.
type Kind struct {
	Name        string
	Description string
	// DefinitionsOnly is true for kinds reported only by the [Checker] on
	// tool and prompt definitions, never by the text [Detector]: on
	// ordinary tool output (READMEs, tutorials) they would be noise.
	DefinitionsOnly bool
}

// Kinds lists every kind, in the order the README documents them.
var Kinds = []Kind{
	{KindInstructionOverride, `instructions aimed at the model: "ignore (all) previous instructions", "you are now DAN", "reveal your system prompt", text addressed to the AI ("note to the AI:", "if you are an AI...")`, false},
	{KindRoleTag, `fake chat-role markers: <|im_start|> and other special tokens, [INST], <<SYS>>, <system>/<IMPORTANT> blocks with prose, "### System:" headings, "SYSTEM:" lines that address the model, fake </tool_result> ends`, false},
	{KindConcealment, `asking the model to hide something from the user: "do not tell the user", "without telling the user", "the user must not know"`, false},
	{KindHiddenUnicode, `invisible characters: zero-width space/joiner/non-joiner outside the scripts and emoji that use them, word joiner, invisible operators, a BOM past the start, Hangul fillers, variation-selector runs`, false},
	{KindTagSmuggling, `Unicode tag characters (U+E0000-U+E007F) other than an emoji subdivision flag`, false},
	{KindBidiControl, `bidi overrides (U+202D, U+202E) anywhere; embeddings and isolates (U+202A-U+202C, U+2066-U+2069) with no right-to-left letter near them`, false},
	{KindEncodedPayload, `base64, hex or percent-encoded text that decodes to a shell command or to injection phrasing`, false},
	{KindSecretAccess, `an instruction to read secrets or credential files (~/.ssh, .env, ~/.aws/credentials, mcp.json...) or to send secrets into a parameter or off the machine`, true},
	{KindCrossToolInstruction, `an instruction about other tools: use this one instead of any other, do not use other tools, after every tool call send..., all emails must go to...`, true},
	{KindShadowing, `a definition that names another server's tool or server (send_email, mail__send_email, "the mail server")`, true},
	{KindPhraseFlood, `a text with more injection phrases than are tried and judged one by one (256 tries and one more per 64 bytes, 64 judgements and one more per 512 bytes): from there to its end, reported as one finding`, false},
}

// Options configure a [Detector] or a [Checker]. The zero value reports
// every kind.
type Options struct {
	// Disable lists kind names not to report. Nil or empty reports every
	// kind. An unknown name is an error.
	Disable []string
}

// kindSet is a set of kind names as a bit mask, in the order of Kinds.
type kindSet uint32

func kindBit(name string) kindSet {
	for i, k := range Kinds {
		if k.Name == name {
			return 1 << i
		}
	}
	panic("injection: unknown kind " + name)
}

func (s kindSet) has(name string) bool { return s&kindBit(name) != 0 }

// enabledKinds turns Options.Disable into the set of kinds to report.
func enabledKinds(opts Options) (kindSet, error) {
	all := kindSet(1)<<len(Kinds) - 1
	for _, name := range opts.Disable {
		i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
		if i < 0 {
			names := make([]string, len(Kinds))
			for j, k := range Kinds {
				names[j] = k.Name
			}
			return 0, fmt.Errorf("injection: Options.Disable: unknown kind %q (known kinds: %s)", name, strings.Join(names, ", "))
		}
		all &^= 1 << i
	}
	return all, nil
}

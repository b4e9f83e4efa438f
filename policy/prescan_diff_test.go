package policy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect"
)

// The secrets the differential plants: each kind the real detector's
// stream settles differently (a fixed pattern, a checksummed token, a PEM
// block that is open-ended until its footer, a JWT).
var plantedSecrets = []string{
	awsKey,
	githubToken,
	privateKey,
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
	"postgres://admin:s3cr3tP4ssw0rd@db.example.com:5432/prod",
}

// writeJSONString writes s as a JSON string literal, escaping what must be
// and, at random, what may be: any character as \uXXXX (a pair for one
// past the BMP), '/' as \/, so that a secret is cut by escapes too.
func writeJSONString(b *strings.Builder, s string, rng *rand.Rand, escapeRate int) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case escapeRate > 0 && rng.IntN(escapeRate) == 0:
			if r == '/' && rng.IntN(2) == 0 {
				b.WriteString(`\/`)
			} else if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04X`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// randomText is prose, logs and multi-byte characters with secrets
// planted, about size bytes.
func randomText(rng *rand.Rand, size int) string {
	fillers := []string{"Zx9Qw2Lp7Rt5Vb3Nm8Kj4Hg6Fd1Sa0Yc", "log line ", "quoted \"word\" ", "tab\there ", "é", "\U0001F600", "—", "\\path\\to ", "a/b/c ", "\n", "text: ", "x"}
	var b strings.Builder
	for b.Len() < size {
		if rng.IntN(8) == 0 {
			sep := []string{" ", "\n", "é"}
			b.WriteString(sep[rng.IntN(3)])
			b.WriteString(plantedSecrets[rng.IntN(len(plantedSecrets))])
			b.WriteString(sep[rng.IntN(3)])
			continue
		}
		f := fillers[rng.IntN(len(fillers))]
		for range 1 + rng.IntN(200) {
			b.WriteString(f)
		}
	}
	return b.String()
}

// randomValue writes a JSON value: objects with keys named like the
// content's ("text", "type") and like secrets, nested arrays, strings
// short and long.
func randomValue(b *strings.Builder, rng *rand.Rand, depth, escapeRate int) {
	switch k := rng.IntN(10); {
	case depth < 3 && k < 3:
		b.WriteByte('{')
		for i := range 1 + rng.IntN(4) {
			if i > 0 {
				b.WriteString([]string{",", " , ", ",\n"}[rng.IntN(3)])
			}
			key := []string{"text", "type", "content", "secret", "k\"ey", "structuredContent"}[rng.IntN(6)]
			writeJSONString(b, key, rng, escapeRate)
			b.WriteString([]string{":", " : "}[rng.IntN(2)])
			randomValue(b, rng, depth+1, escapeRate)
		}
		b.WriteByte('}')
	case depth < 3 && k < 5:
		b.WriteByte('[')
		for i := range 1 + rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomValue(b, rng, depth+1, escapeRate)
		}
		b.WriteByte(']')
	case k == 5:
		b.WriteString([]string{"1", "true", "null", "-2.5e3"}[rng.IntN(4)])
	default:
		size := 1 + rng.IntN(200)
		if rng.IntN(3) == 0 {
			size = streamFrom + rng.IntN(3*streamFrom) // streamed while it arrives
		}
		writeJSONString(b, randomText(rng, size), rng, escapeRate)
	}
}

// prescanPieces reads line as a line reader gives it to its watcher: in
// pieces cut at random, some a few bytes long (a cut at every kind of
// place: inside escapes, pairs, UTF-8 sequences, secrets), in a buffer
// with room to spare, then whole.
func prescanPieces(c Chain, line []byte, rng *rand.Rand) (*Prescan, []byte) {
	buf := make([]byte, len(line), len(line)+rng.IntN(4096))
	copy(buf, line)
	ps := c.Prescan(Result)
	for at := 0; at < len(buf); {
		step := 1 + rng.IntN(16)
		if rng.IntN(64) == 0 {
			step = 1 + rng.IntN(8<<10)
		}
		at = min(len(buf), at+step)
		if at < len(buf) {
			ps.Advance(buf[:at])
		}
	}
	ps.Finish(buf)
	return ps, buf
}

// TestPrescanDifferentialRealSecrets: random results with secrets planted
// in escaped and plain strings, long ones streamed through the real
// secrets detector's Stream, framed in a response line, read in pieces cut
// anywhere: Run with the prescan returns what Run without it returns, for
// the default set and for chains where a policy before redacts (the
// prescan must then go unused); RunAhead and its rest too.
func TestPrescanDifferentialRealSecrets(t *testing.T) {
	chains := map[string]Chain{
		"default": defaultDetectorSet(t),
		"pii redacts first": {
			detectorPolicy(t, newPII, "pii", "redact"),
			detectorPolicy(t, newSecrets, "secrets", "redact"),
			detectorPolicy(t, newInjection, "injection", "audit"),
		},
	}
	entropy := config.Policy{Name: "entropy", Path: "policies[0]", Enabled: true, Action: "audit", On: []string{"results"}, HighEntropy: true}
	chains["high entropy, audit"] = Chain{mustPolicy(t, newSecrets, entropy), detectorPolicy(t, newSecrets, "secrets", "redact")}
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	ctx := context.Background()
	entropyFound, big := 0, 0
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 30))
		var b strings.Builder
		b.WriteString(`{"content":[{"type":"text","text":`)
		escapeRate := []int{0, 3, 40}[rng.IntN(3)]
		writeJSONString(&b, randomText(rng, streamFrom+rng.IntN(4*streamFrom)), rng, escapeRate)
		b.WriteString(`}],"structuredContent":`)
		randomValue(&b, rng, 0, escapeRate)
		b.WriteByte('}')
		result := b.String()
		if !utf8.ValidString(result) {
			t.Fatal("the generator made invalid UTF-8")
		}
		prefix := []string{`{"jsonrpc":"2.0","id":7,"result":`, `{"id":"a\"}","jsonrpc":"2.0", "result" : `}[rng.IntN(2)]
		suffix := []string{`}`, `,"id":9}`, " \t}"}[rng.IntN(3)]
		line := []byte(prefix + result + suffix)
		if len(result) >= concurrentMin {
			big++ // its later policies decide early, on the prescan's strings
		}
		for name, chain := range chains {
			ps, buf := prescanPieces(chain, line, rng)
			in := toolCall(Result, "")
			in.Message = buf[len(prefix) : len(prefix)+len(result)]
			wantMsg, wantRecords, wantDenied := chain.Run(ctx, in)
			if ps.sharedFor(in.Message) == nil {
				t.Fatalf("round %d, %s: the prescan does not cover the result", round, name)
			}
			in.Prescan = ps
			msg, records, denied := chain.Run(ctx, in)
			if string(msg) != string(wantMsg) || !reflect.DeepEqual(records, wantRecords) || !reflect.DeepEqual(denied, wantDenied) {
				t.Fatalf("round %d, %s: with the prescan Run gave records %+v (denied %v), without %+v (denied %v); same message: %v",
					round, name, records, denied, wantRecords, wantDenied, string(msg) == string(wantMsg))
			}
			// RunAhead too, its tail held until rest: the same in all.
			aheadMsg, aheadRecords, aheadDenied, rest := chain.RunAhead(ctx, in)
			if rest != nil {
				aheadRecords = append(aheadRecords, rest()...)
			}
			if string(aheadMsg) != string(wantMsg) || !reflect.DeepEqual(aheadRecords, wantRecords) || !reflect.DeepEqual(aheadDenied, wantDenied) {
				t.Fatalf("round %d, %s: with the prescan RunAhead gave records %+v (denied %v), Run without %+v (denied %v); same message: %v",
					round, name, aheadRecords, aheadDenied, wantRecords, wantDenied, string(aheadMsg) == string(wantMsg))
			}
			for _, r := range records {
				if r.Policy == "entropy" {
					entropyFound++
				}
			}
			for _, s := range plantedSecrets[:2] {
				if strings.Contains(string(msg), s) {
					t.Fatalf("round %d, %s: a planted secret is in the result Run returned", round, name)
				}
			}
		}
	}
	if big == 0 {
		t.Fatal("no result was big enough for the policies to decide side by side")
	}
	if entropyFound == 0 {
		t.Fatal("the high-entropy scan found nothing: the differential does not reach it")
	}
}

// FuzzPrescanStreamsAsScan: a string long enough to be streamed, its body
// the fuzzer's bytes (escapes, pairs, invalid UTF-8, secrets) after a
// padding, read in pieces cut anywhere: the real secrets detector's
// findings through the prescan are Scan's on the string the shared
// decoding finds.
func FuzzPrescanStreamsAsScan(f *testing.F) {
	f.Add(`key `+awsKey+` \n`+githubToken, uint64(1))
	f.Add(`\u0041KIAZ2Q3W4E5R6T7Y2U3 \ud83d\ude00 `+awsKey+`\\`, uint64(2))
	f.Add(strings.ReplaceAll(privateKey, "\n", `\n`), uint64(3))
	f.Add("\xff"+awsKey+"\xe2\x82 \\\"", uint64(4))
	f.Add(`postgres://admin:s3cr3tP4ssw0rd@db.example.com:5432/prod\/x`, uint64(5))
	p, err := newSecrets(config.Policy{Name: "secrets", Path: "policies[0]", Enabled: true, Action: "redact", On: []string{"results"}}, Env{})
	if err != nil {
		f.Fatal(err)
	}
	secretsScan := p.(*textScan)
	f.Fuzz(func(t *testing.T, body string, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>9))
		pad := strings.Repeat("padding ", streamFrom/8+rng.IntN(64))
		line := []byte(`{"text":"` + pad[:rng.IntN(len(pad))] + body + `","n":1}`)
		ss := &sharedStrings{msg: line}
		if ss.of(line) == nil || ss.err != nil || len(ss.strings) != 1 {
			return // not one string value
		}
		ps, _ := prescanPieces(Chain{secretsScan}, line, rng)
		if ps.failed || len(ps.strings) != 1 || ps.strings[0] != ss.strings[0] {
			t.Fatalf("%q: the prescan (failed %v) found %d strings, want %+v", body, ps.failed, len(ps.strings), ss.strings[0])
		}
		want := secretsScan.det.Scan(ss.strings[0].s, nil)
		var got []detect.Finding
		if sc := ps.scans[0]; len(sc.hits) > 0 {
			got = sc.finds[sc.hits[0].lo:sc.hits[0].hi]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: the prescan found %v, Scan finds %v", body, got, want)
		}
	})
}

// TestPrescanCutAtEveryByte: a streamed string whose end holds every kind
// of place a piece can end at (inside \uXXXX, between a surrogate pair's
// halves, after a lone backslash of \\, inside a UTF-8 sequence and an
// invalid one, inside a secret written with escapes, between the closing
// quote and what says it is a value) is cut at each of its bytes, alone
// and one piece after another: the prescan finds the strings the shared
// decoding finds and the real secrets Scan's findings in them.
func TestPrescanCutAtEveryByte(t *testing.T) {
	p, err := newSecrets(config.Policy{Name: "secrets", Path: "policies[0]", Enabled: true, Action: "redact", On: []string{"results"}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	secretsScan := p.(*textScan)
	tricky := `\u00e9\ud83d\ude00 \\ \" \/ ` + "\xe2\x82\xac \xe2\x82 \xff é " + `\u0041KIAZ2Q3W4E5R6T7Y2U3 \n` + awsKey + `\\`
	pad := strings.Repeat("padding ", streamFrom/8)
	line := []byte(`{"k":1,"text":"` + pad + tricky + `" , "n":["` + tricky + `"]}`)
	ss := &sharedStrings{msg: line}
	if ss.of(line) == nil || ss.err != nil {
		t.Fatal("the shared decoding cannot read the line")
	}
	check := func(what string, ps *Prescan) {
		t.Helper()
		if ps.failed || len(ps.strings) != len(ss.strings) {
			t.Fatalf("%s: the prescan (failed %v) found %d strings, the shared decoding %d", what, ps.failed, len(ps.strings), len(ss.strings))
		}
		hits := ps.scans[0].hits
		for i, js := range ss.strings {
			if ps.strings[i] != js {
				t.Fatalf("%s: string %d is %+v in the prescan, %+v in the shared decoding", what, i, ps.strings[i], js)
			}
			want := secretsScan.det.Scan(js.s, nil)
			var got []detect.Finding
			if len(hits) > 0 && hits[0].index == i {
				got, hits = ps.scans[0].finds[hits[0].lo:hits[0].hi], hits[1:]
			}
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Fatalf("%s: string %d: the prescan found %v, Scan finds %v (want some)", what, i, got, want)
			}
		}
	}
	chain := Chain{secretsScan}
	from := len(`{"k":1,"text":"`) + len(pad) - 16
	every := chain.Prescan(Result)
	for cut := from; cut < len(line); cut++ {
		ps := chain.Prescan(Result)
		ps.Advance(line[:from-1])
		ps.Advance(line[:cut])
		ps.Finish(line)
		check(fmt.Sprintf("cut at %d", cut), ps)
		every.Advance(line[:cut])
	}
	every.Finish(line)
	check("cut at every byte", every)
}

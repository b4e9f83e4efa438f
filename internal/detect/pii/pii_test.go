package pii

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// Each case pins one documented decision; the samples are marked up as in
// testdata/labelled.txt.
var scanCases = []struct{ name, text string }{
	{"no trigger byte", "plain prose without any of the bytes that start a finding"},
	{"digits but nothing", "42 is the answer, 2024-06-01 the date"},

	{"email", "write to ⟦email:alice@example.com⟧."},
	{"email: quote trimmed", "email = '⟦email:alice@example.com⟧'"},
	{"email: diff marker trimmed", "+⟦email:alice@example.com⟧"},
	{"email: module version", "golang.org/x/tools@v0.26.0"},
	{"email: file extension", "icon@2x.png"},
	{"email: url userinfo", "https://bob:secret@host.example.com/x and https://bob@host.example.com/"},
	{"email: scp target", "git@github.com:org/repo.git but not ⟦email:git@github.com⟧: done"},
	{"email: escaped newline", `a,b\n⟦email:kim@example.com⟧,c`},
	{"email: no dot in domain", "root@localhost"},
	{"email: mixed-case TLD is code", "m.Path@m.Version, but ⟦email:BOB@EXAMPLE.COM⟧"},

	{"ipv4 public", "from ⟦ipv4:93.184.216.34⟧:443"},
	{"ipv4 private by default", "from 10.0.0.1 and 127.0.0.1 and 192.168.1.1"},
	{"ipv4 version word", "version 93.184.216.34"},
	{"ipv4 one-digit quads", "section 4.2.1.3, example 1.2.3.4, resolver 8.8.8.8"},
	{"ipv4 version words", "v 1.15.8.1, build 52.94.236.248, update V8 to 9.6.180.14"},
	{"ipv4 longer dotted", "1.3.6.1.4.1 and 8.8.8.8.in-addr.arpa"},
	{"ipv4 leading zero", "010.1.1.1"},
	{"ipv4 cidr", "⟦ipv4:93.184.216.34⟧/32 but not the network 93.184.216.0/24"},
	{"ipv6 network", "2001:4860:4860::/48 and 2a00:1450::"},
	{"ipv6 public", "[⟦ipv6:2001:4860:4860::8888⟧]:53"},
	{"ipv6 mapped is one finding", "⟦ipv6:::ffff:93.184.216.34⟧"},
	{"ipv6 label", "ip:⟦ipv6:2606:4700:4700::1111⟧"},
	{"ipv6 not public", "::1 fe80::1 fd00::1 2001:db8::1 ff02::1"},
	{"ipv6 look-alikes", "12:30:45 00:1a:2b:3c:4d:5e std::vector a::b"},

	{"card grouped", "⟦credit_card:4111 1111 1111 1111⟧"},
	{"card in longer number", "41111111111111111 and 1234 4111 1111 1111 1111"},
	{"card with a sign", "-4111111111111111"},
	{"card among long numbers", "4111111111111111, 7243190128412341, 1234567890123"},
	{"card after a long decimal", "{2251799813685250.5, 4111111111111111}"},
	{"cards in a list", "⟦credit_card:4111111111111111⟧,⟦credit_card:5555555555554444⟧"},
	{"card Luhn-invalid", "4111 1111 1111 1112"},
	{"card unknown issuer", "1234567812345670"},
	{"card then CVV", "⟦credit_card:5555 5555 5555 4444⟧ 321"},
	{"card dashes bind", "4111-1111-1111-1111-1111"},

	{"iban print", "⟦iban:GB29 NWBK 6016 1331 9268 19⟧"},
	{"iban electronic", "⟦iban:DE89370400440532013000⟧"},
	{"iban bad check: tail taken by nothing", "NL84 SEMI 0296 9058 33"},

	{"ssn dashed", "⟦us_ssn:536-22-1234⟧"},
	{"ssn bare without keyword", "536221234"},
	{"ssn bare after keyword", "SSN: ⟦us_ssn:536221234⟧"},
	{"ssn spaced after keyword", "social security ⟦us_ssn:536 22 1234⟧"},
	{"ssn keyword too far", "SSN field, then forty bytes of unrelated text: 536221234"},
	{"ssn never issued", "000-22-1234 666-22-1234 900-22-1234 536-00-1234 536-22-0000 078-05-1120"},

	{"phone international", "⟦phone:+44 20 7946 0958⟧"},
	{"phone country code in parens", "⟦phone:(+44) 20 7946 0958⟧ (⟦phone:+9876654310⟧)"},
	{"phone trunk in parens", "⟦phone:+49 (0)30 1234567⟧"},
	{"phone E.164", "⟦phone:+14155552671⟧"},
	{"phone NANP", "⟦phone:(415) 555-2671⟧, ⟦phone:415.555.2671⟧, ⟦phone:1-800-555-0199⟧, ⟦phone:1 (800) 555-0199⟧"},
	{"phone NANP bad area", "123-555-2671 911-555-2671"},
	{"phone national", "⟦phone:020 7946 0958⟧, ⟦phone:01 23 45 67 89⟧, ⟦phone:01.23.45.67.89⟧"},
	{"phone national hex dump", "00001b0 00 00 6d 01 00 00 00 00 and 01 23 45 67 89 ab"},
	{"phone national bit string", "01110/11110 0110 1011 10"},
	{"phone national in longer groups", "SN 2024 0815 4711 00"},
	{"phone area code with slash", "⟦phone:030/12345678⟧, ⟦phone:0171/234 56 78⟧, 01/02/2024"},
	{"phone not dates or times", "2024-06-01 12:30 +05:30 +1 +3.5% 01-02-2024"},
	{"phone bare digits", "4155552671 02079460958"},

	{"es_dni", "⟦es_dni:12345678Z⟧ ⟦es_dni:X1234567L⟧ 12345678A"},
	{"es_dni date-like", "20240115T"},
	{"it_fiscal_code", "⟦it_fiscal_code:RSSMRA85T10A562S⟧ RSSMRA85T10A562T"},
	{"br_cpf", "⟦br_cpf:529.982.247-25⟧ 529.982.247-26 52998224725"},
	{"br_cpf bare after keyword", "CPF ⟦br_cpf:52998224725⟧"},
	{"nl_bsn needs keyword", "111222333 and BSN ⟦nl_bsn:111222333⟧"},
	{"in_aadhaar", "⟦in_aadhaar:2341 2341 2346⟧, 2341 2341 2347, 234123412346"},
	{"in_aadhaar in longer groups", "2341 2341 2341 2346 and 1 2341 2341 2346"},
}

func TestScan(t *testing.T) {
	d := Default()
	for _, c := range scanCases {
		s, err := parseSample(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := d.Scan(s.text, nil); !slices.Equal(got, s.want) {
			t.Errorf("%s: Scan(%q)\n got %v\nwant %v", c.name, s.text, show(s.text, got), show(s.text, s.want))
		}
	}
}

func show(text string, fs []detect.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+":"+text[f.Start:f.End])
	}
	return out
}

func TestScanAppends(t *testing.T) {
	prior := []detect.Finding{{Kind: "other", Start: 100, End: 200}}
	got := Default().Scan("mail bob@example.com, call +44 20 7946 0958", slices.Clone(prior))
	want := []detect.Finding{prior[0], {Kind: "email", Start: 5, End: 20}, {Kind: "phone", Start: 27, End: 43}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestOptionsAllIPs(t *testing.T) {
	d, err := New(Options{AllIPs: true})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := parseSample("⟦ipv4:10.0.0.1⟧ ⟦ipv4:127.0.0.1⟧ [⟦ipv6:::1⟧]:80 ⟦ipv6:fe80::1%eth0⟧ ⟦ipv6:2001:db8::1⟧ ⟦ipv4:8.8.8.8⟧ ⟦ipv4:93.184.216.0⟧/24 ⟦ipv6:2001:4860::⟧/32")
	if got := d.Scan(s.text, nil); !slices.Equal(got, s.want) {
		t.Errorf("got %v, want %v", show(s.text, got), show(s.text, s.want))
	}
}

func TestOptionsKinds(t *testing.T) {
	d, err := New(Options{Kinds: []string{"email", "iban"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := parseSample("⟦email:a@example.com⟧ 4111 1111 1111 1111 ⟦iban:DE89370400440532013000⟧ 8.8.8.8 2001:4860:4860::8888")
	if got := d.Scan(s.text, nil); !slices.Equal(got, s.want) {
		t.Errorf("got %v, want %v", show(s.text, got), show(s.text, s.want))
	}
	_, err = New(Options{Kinds: []string{"email", "passport"}})
	if err == nil || !strings.Contains(err.Error(), `"passport"`) || !strings.Contains(err.Error(), "credit_card") {
		t.Errorf("unknown kind: got error %v, want one naming the kind and the known ones", err)
	}
}

func TestKinds(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if !snake.MatchString(k.Name) || k.Description == "" || seen[k.Name] {
			t.Errorf("kind %+v: want a unique lower snake case name and a description", k)
		}
		seen[k.Name] = true
	}
	if len(seen) != int(kindAadhaar)+1 {
		t.Errorf("%d kinds listed, %d defined", len(seen), kindAadhaar+1)
	}
}

func TestChecksums(t *testing.T) {
	digits := func(s string) []byte {
		b := []byte(s)
		for k := range b {
			b[k] -= '0'
		}
		return b
	}
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"luhn 4111111111111111", luhn(digits("4111111111111111"))},
		{"luhn 79927398713", luhn(digits("79927398713"))},
		{"not luhn 79927398710", !luhn(digits("79927398710"))},
		{"iban GB82WEST12345698765432", validIBAN([]byte("GB82WEST12345698765432"))},
		{"iban check 00 refused", !validIBAN([]byte("GB00WEST12345698765432"))},
		{"verhoeff 2363", verhoeff([]byte("2363"))},
		{"not verhoeff 2364", !verhoeff([]byte("2364"))},
		{"cpf 529.982.247-25", validCPF([11]byte([]byte("52998224725")))},
		{"cpf repeated digits", !validCPF([11]byte([]byte("11111111111")))},
		{"bsn 111222333", elevenProof([9]byte([]byte("111222333")))},
		{"bsn 000000000", !elevenProof([9]byte([]byte("000000000")))},
		{"fiscal code", matchFiscalCode("RSSMRA85T10A562S", 0) == 16},
		{"dni letter", matchDNI("12345678Z", 0) == 9},
	} {
		if !c.ok {
			t.Errorf("%s: wrong", c.name)
		}
	}
}

// TestScanConcurrent: one detector, many goroutines, the same answers (run
// with -race).
func TestScanConcurrent(t *testing.T) {
	samples := loadSamples(t, "testdata/labelled.txt")
	d := Default()
	want := make([][]detect.Finding, len(samples))
	for k, s := range samples {
		want[k] = d.Scan(s.text, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for k, s := range samples {
				if got := d.Scan(s.text, nil); !slices.Equal(got, want[k]) {
					errs <- fmt.Sprintf("line %d: got %v, want %v", s.line, got, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Package corpus makes realistic tool output for the detectors' and the
// perf suite's benchmarks and differential tests: what a file-reading,
// shell or API tool returns. Everything is deterministic (the caller's
// seed), so that two runs measure the same bytes, and holds nothing a
// detector should find.
package corpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Mixed is what a real big tool result holds, unlike one repeated byte:
// runs of pretty-printed JSON records, log lines and prose (a little of it
// UTF-8). It is size bytes, cut at a line end.
func Mixed(size int) string {
	var b strings.Builder
	b.Grow(size + 64<<10)
	r := rand.New(rand.NewPCG(13, 7))
	for b.Len() < size {
		[]func(*strings.Builder, *rand.Rand){JSONRecords, Logs, Prose}[r.IntN(3)](&b, r)
	}
	text := b.String()[:size]
	return text[:strings.LastIndexByte(text, '\n')+1]
}

// proseSentences are documentation and mail prose, with the words the
// injection rules key on used as ordinary words (ignore, system, prompt,
// previous, instructions, user), as real documentation does, a few of
// them not in English.
var proseSentences = []string{
	"The pipeline builds the project, runs the unit tests and the end-to-end suite, then publishes the artifacts.",
	"When a task fails, the runner keeps its logs for seven days; see the path printed above.",
	"Patterns in the config are matched against the file names relative to the repository root.",
	"The skip list takes precedence over the include list, so a file in both is skipped.",
	"Ask the on-call engineer before re-running a deploy that failed halfway through.",
	"You can safely ignore the deprecation notice printed during the build.",
	"The system will restart automatically after the update is installed.",
	"Follow the installation instructions in the README before you run the server for the first time.",
	"The previous release shipped with a bug in the cache, which version 2.4 fixes.",
	"Our support bot reads its system prompt from prompts/support.md at start.",
	"The user must accept the terms before the account is created, and may withdraw later.",
	"Environment variables override values from the config file, and flags override both.",
	"Memory use grows with the number of open sessions: about forty kilobytes each.",
	"If the server exits with \"database is locked\", another process holds the file.",
	"Meeting notes: we agreed to move the launch to Thursday; Priya will update the plan.",
	"Thanks for the quick review! I pushed a fix for the two comments about naming.",
	"Requests are retried three times with exponential backoff before the error is shown.",
	"Each chapter ends with exercises; the answers are at the back of the book.",
	"Die Konfiguration wird beim Start gelesen; Änderungen gelten erst nach einem Neustart.",
	"Le serveur répond en moins de deux secondes, même sous forte charge — voir le tableau ci-dessous.",
	"Das Ergebnis enthält höchstens 500 Einträge pro Seite.",
}

// Prose writes a paragraph of proseSentences.
func Prose(b *strings.Builder, r *rand.Rand) {
	for range 3 + r.IntN(4) {
		b.WriteString(proseSentences[r.IntN(len(proseSentences))])
		b.WriteByte(' ')
	}
	b.WriteString("\n\n")
}

// JSONRecords writes a page of an issue tracker's API answer, pretty
// printed, as a tool that returns an API's JSON as text does.
func JSONRecords(b *strings.Builder, r *rand.Rand) {
	type user struct {
		Login string `json:"login"`
		ID    int    `json:"id"`
		URL   string `json:"html_url"`
	}
	type issue struct {
		URL       string   `json:"url"`
		ID        int64    `json:"id"`
		NodeID    string   `json:"node_id"`
		Number    int      `json:"number"`
		Title     string   `json:"title"`
		User      user     `json:"user"`
		Labels    []string `json:"labels"`
		State     string   `json:"state"`
		Comments  int      `json:"comments"`
		CreatedAt string   `json:"created_at"`
		Body      string   `json:"body"`
		Score     float64  `json:"score"`
	}
	logins := []string{"maria", "sam-chen", "dependabot[bot]", "priya_k", "octocat"}
	var page []issue
	for range 20 {
		n := 1000 + r.IntN(9000)
		login := logins[r.IntN(len(logins))]
		page = append(page, issue{
			URL: fmt.Sprintf("https://api.github.com/repos/acme/notes/issues/%d", n), ID: 1e9 + r.Int64N(1e9),
			NodeID: fmt.Sprintf("I_kwDOA%08xM%05d", r.Uint32(), r.IntN(99999)), Number: n,
			Title:  proseSentences[r.IntN(len(proseSentences))][:40],
			User:   user{login, 1 + r.IntN(9e7), "https://github.com/" + login},
			Labels: []string{"bug", "area/search"}[:1+r.IntN(2)], State: []string{"open", "closed"}[r.IntN(2)],
			Comments: r.IntN(40), CreatedAt: fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02dZ", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60)),
			Body:  proseSentences[r.IntN(len(proseSentences))] + "\n\n" + proseSentences[r.IntN(len(proseSentences))],
			Score: r.Float64(),
		})
	}
	out, _ := json.MarshalIndent(page, "", "  ")
	b.Write(out)
	b.WriteByte('\n')
}

// Logs writes access and application logs: timestamps, private
// addresses, request ids, paths, durations.
func Logs(b *strings.Builder, r *rand.Rand) {
	paths := []string{"/api/v1/items", "/api/v1/users/me", "/healthz", "/static/app.3f9c1d.js", "/api/v1/search"}
	for range 20 {
		ts := fmt.Sprintf("2025-03-14T09:%02d:%02d.%03dZ", r.IntN(60), r.IntN(60), r.IntN(1000))
		switch r.IntN(4) {
		case 0:
			fmt.Fprintf(b, "10.244.%d.%d - - [14/Mar/2025:09:%02d:%02d +0000] \"GET %s?page=%d HTTP/1.1\" 200 %d \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\" %d.%03d\n",
				r.IntN(4), r.IntN(255), r.IntN(60), r.IntN(60), paths[r.IntN(len(paths))], r.IntN(50), r.IntN(90000), r.IntN(2), r.IntN(1000))
		case 1:
			fmt.Fprintf(b, "%s INFO  http: GET %s status=200 latency=%dms request_id=%08x-7b3d-4c8e-9f0a-%012x\n",
				ts, paths[r.IntN(len(paths))], r.IntN(900), r.Uint32(), r.Uint64()&(1<<48-1))
		case 2:
			fmt.Fprintf(b, "%s WARN  retrying https://storage.googleapis.com/bucket-%d/objects/%d attempt=%d backoff=%dms\n",
				ts, r.IntN(9), r.IntN(1e6), 1+r.IntN(3), 250<<r.IntN(3))
		default:
			fmt.Fprintf(b, "%s DEBUG cache miss key=user:%d:profile ttl=300s locale=en-us pid=%d goroutine=%d\n",
				ts, r.IntN(1e5), 1000+r.IntN(30000), r.IntN(5000))
		}
	}
}

// CSV writes rows of a numbers-heavy export: ids, dates, coordinates,
// amounts, counts.
func CSV(b *strings.Builder, r *rand.Rand) {
	if b.Len() == 0 {
		b.WriteString("order_id,created,store,lat,lon,items,amount_eur,tax,discount,sku,warehouse_ts\n")
	}
	for range 50 {
		fmt.Fprintf(b, "%d,2025-%02d-%02d %02d:%02d:%02d,%d,%.6f,%.6f,%d,%d.%02d,%.2f,%d%%,%d-%04d,%d\n",
			4000000+r.IntN(5e6), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), 100+r.IntN(900),
			40+r.Float64()*10, r.Float64()*20-5, 1+r.IntN(12), r.IntN(2000), r.IntN(100), r.Float64()*100, r.IntN(30),
			10000+r.IntN(90000), r.IntN(10000), 1700000000+r.IntN(1e8))
	}
}

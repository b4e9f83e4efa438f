package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// mixedText is what a real big tool result holds, unlike text_bytes' one
// repeated byte: pretty-printed JSON records, log lines and prose (a little
// of it UTF-8), in runs of each, with nothing a detector should find. The
// same seed gives the same bytes, so that runs compare. It is size bytes,
// cut at a line end.
func mixedText(size int) string {
	var b strings.Builder
	b.Grow(size + 4096)
	r := rand.New(rand.NewPCG(13, 7))
	for b.Len() < size {
		switch r.IntN(3) {
		case 0:
			writeMixedJSON(&b, r)
		case 1:
			writeMixedLogs(&b, r)
		default:
			writeMixedProse(&b, r)
		}
	}
	text := b.String()[:size]
	return text[:strings.LastIndexByte(text, '\n')+1]
}

// mixedSentences are documentation and mail prose, with the words the
// injection rules key on used as ordinary words, as real documentation does.
var mixedSentences = []string{
	"The pipeline builds the project, runs the unit tests and the end-to-end suite, then publishes the artifacts.",
	"When a task fails, the runner keeps its logs for seven days; see the path printed above.",
	"You can safely ignore the deprecation notice printed during the build.",
	"The system will restart automatically after the update is installed.",
	"Follow the installation instructions in the README before you run the server for the first time.",
	"The previous release shipped with a bug in the cache, which version 2.4 fixes.",
	"The user must accept the terms before the account is created, and may withdraw later.",
	"Environment variables override values from the config file, and flags override both.",
	"If the server exits with \"database is locked\", another process holds the file.",
	"Meeting notes: we agreed to move the launch to Thursday; Priya will update the plan.",
	"Die Konfiguration wird beim Start gelesen; Änderungen gelten erst nach einem Neustart.",
	"Le serveur répond en moins de deux secondes, même sous forte charge — voir le tableau ci-dessous.",
	"Requests are retried three times with exponential backoff before the error is shown.",
	"Das Ergebnis enthält höchstens 500 Einträge pro Seite.",
}

func writeMixedProse(b *strings.Builder, r *rand.Rand) {
	for range 2 + r.IntN(5) {
		for range 3 + r.IntN(4) {
			b.WriteString(mixedSentences[r.IntN(len(mixedSentences))])
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
	}
}

// writeMixedJSON writes records of an issue tracker's API answer, pretty
// printed, as a tool that returns an API's JSON as text does.
func writeMixedJSON(b *strings.Builder, r *rand.Rand) {
	logins := []string{"maria", "sam-chen", "dependabot[bot]", "priya_k", "jürgen"}
	b.WriteString("[\n")
	for i := range 5 + r.IntN(20) {
		if i > 0 {
			b.WriteString(",\n")
		}
		n, login := 1000+r.IntN(9000), logins[r.IntN(len(logins))]
		fmt.Fprintf(b, `  {
    "url": "https://api.github.com/repos/acme/notes/issues/%d",
    "id": %d,
    "node_id": "I_kwDOA%08xM%05d",
    "number": %d,
    "title": %q,
    "user": {"login": %q, "id": %d, "html_url": "https://github.com/%s"},
    "labels": ["bug", "area/search"],
    "state": %q,
    "comments": %d,
    "created_at": "2025-%02d-%02dT%02d:%02d:%02dZ",
    "body": %q,
    "score": %.6f
  }`, n, 1e9+r.Int64N(1e9), r.Uint32(), r.IntN(99999), n, mixedSentences[r.IntN(len(mixedSentences))],
			login, 1+r.IntN(9e7), login, []string{"open", "closed"}[r.IntN(2)], r.IntN(40),
			1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60),
			mixedSentences[r.IntN(len(mixedSentences))]+"\n\n"+mixedSentences[r.IntN(len(mixedSentences))], r.Float64())
	}
	b.WriteString("\n]\n")
}

// writeMixedLogs writes access and application logs: timestamps, private
// addresses, request ids, paths, durations.
func writeMixedLogs(b *strings.Builder, r *rand.Rand) {
	paths := []string{"/api/v1/items", "/api/v1/users/me", "/healthz", "/static/app.3f9c1d.js", "/api/v1/search"}
	for range 10 + r.IntN(40) {
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
			fmt.Fprintf(b, "%s DEBUG cache miss key=user:%d:profile ttl=300s locale=de-de pid=%d — ok\n",
				ts, r.IntN(1e5), 1000+r.IntN(30000))
		}
	}
}

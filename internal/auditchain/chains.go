package auditchain

import (
	"bufio"
	"maps"
	"os"
	"slices"
)

// Chain is one replica's verified chain.
type Chain struct {
	Replica string // as its headers name it; empty for a writer that names none
	*Report
}

// VerifyChains verifies files that may hold several chains: each replica of
// a cluster writes its own, named in every file's header. Files are grouped
// by that name and each group is verified as Verify does; the chains come
// back sorted by replica. A file whose header cannot be read goes with the
// files that name no replica, where Verify says what is wrong with it.
func VerifyChains(paths []string) ([]Chain, error) {
	groups := map[string][]string{}
	for _, p := range paths {
		r := replicaOf(p)
		groups[r] = append(groups[r], p)
	}
	var chains []Chain
	for _, r := range slices.Sorted(maps.Keys(groups)) {
		rep, err := Verify(groups[r])
		if err != nil {
			return nil, err
		}
		chains = append(chains, Chain{Replica: r, Report: rep})
	}
	return chains, nil
}

// replicaOf reads the replica a file's header names, if it has one.
func replicaOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// A header is short: a longer first line is not one.
	line, _, err := bufio.NewReaderSize(f, 4096).ReadLine()
	if err != nil {
		return ""
	}
	h, _ := parseHeader(line)
	return h.Replica
}

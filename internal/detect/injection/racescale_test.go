package injection

// raceScaled is n rounds of a random differential test, a third of them
// under the race detector (CI's run), where each round is many times
// slower: the fuzz targets and the full count without -race cover more.
func raceScaled(n int) int {
	if raceEnabled {
		return max(1, n/3)
	}
	return n
}

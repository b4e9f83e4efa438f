package jsonrpc

import "bytes"

// TryWriteLines writes msgs as lines in one non-blocking write, when w is
// a non-blocking pipe and they fit in the write buffer together (more is
// better left to a writer that can wait).
func (s *lineStream) TryWriteLines(msgs [][]byte) (int, []byte, error) {
	size := 0
	for _, m := range msgs {
		size += len(m) + 1
	}
	if s.raw == nil || size > maxKeptWriteBuffer {
		return 0, nil, nil
	}
	select {
	case s.turn <- struct{}{}:
	default:
		return 0, nil, nil
	}
	defer func() { <-s.turn }()
	s.wbuf = s.wbuf[:0]
	for _, m := range msgs {
		s.wbuf = append(append(s.wbuf, m...), '\n')
	}
	n, _ := s.raw.tryWrite(s.wbuf)
	// No room, or the attempt failed: what did not go out is written as
	// usual, by a writer that can wait, and sees (and reports) an error
	// itself.
	whole, end := linesWritten(msgs, n)
	if whole < len(msgs) && n > end {
		return whole, bytes.Clone(s.wbuf[n : end+len(msgs[whole])+1]), nil
	}
	return whole, nil, nil
}

// linesWritten says how many of msgs, written as lines one after another,
// the first n bytes hold whole, and where the last of those ends.
func linesWritten(msgs [][]byte, n int) (whole, end int) {
	for _, m := range msgs {
		next := end + len(m) + 1
		if next > n {
			break
		}
		whole, end = whole+1, next
	}
	return whole, end
}

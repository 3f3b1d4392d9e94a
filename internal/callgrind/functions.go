package callgrind

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ReadFunctions reads the instructions (event Ir) of a callgrind output file by
// function, each function's own (not those of what it called): the cost lines
// under each fn= line, except the line after each calls= line, which is the call's
// inclusive cost. Compressed names ("fn=(12)") resolve to their first spelling.
func ReadFunctions(name string) (map[string]uint64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("callgrind output: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	names := map[string]string{} // "(12)" → name
	out := map[string]uint64{}
	fn, call := "", false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		switch c := line[0]; {
		case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*':
			if call {
				call = false // the call's inclusive cost: the callee's, not fn's own
				continue
			}
			fields := strings.Fields(line)
			if len(fields) < 2 || fn == "" {
				continue // a position without costs
			}
			v, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("callgrind output %s:%d: %q: %w", name, n, line, err)
			}
			out[fn] += v
		case strings.HasPrefix(line, "fn="):
			fn = resolve(names, line[len("fn="):])
		case strings.HasPrefix(line, "cfn="):
			resolve(names, line[len("cfn="):]) // may spell a name fn= later uses
		case strings.HasPrefix(line, "calls="):
			call = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("callgrind output %s: %w", name, err)
	}
	return out, nil
}

// resolve reads "(id) name", "(id)" or "name", remembering ids' names.
func resolve(names map[string]string, s string) string {
	if !strings.HasPrefix(s, "(") {
		return s
	}
	id, name, ok := strings.Cut(s, ")")
	id += ")"
	if !ok {
		return s
	}
	if name = strings.TrimSpace(name); name != "" {
		names[id] = name
		return name
	}
	if known, ok := names[id]; ok {
		return known
	}
	return "fn" + id
}

package callgrind

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Costs are the instructions (event Ir) of one callgrind output file by function,
// each function's own (Self), and how many times each function called each other
// (Calls, by callee then caller, recursion depths merged: see Unrecursed). Call
// counts are exact; the inclusive costs callgrind gives calls are not read: its
// call tree takes a goroutine switch (a preemption at a function's stack check)
// for part of a call, and so gives calls other goroutines' work.
type Costs struct {
	Self  map[string]uint64
	Calls map[string]map[string]uint64 // callee → caller → calls
}

// ReadFunctions reads the instructions of a callgrind output file by function,
// each function's own (not those of what it called).
func ReadFunctions(name string) (map[string]uint64, error) {
	c, err := ReadCosts(name)
	return c.Self, err
}

// ReadCosts reads a callgrind output file's costs by function: the cost lines
// under each fn= line are its own, except the line after each calls= line, which
// is a call's inclusive cost (skipped); the calls= line counts the calls of fn to
// the function the cfn= line before it named. Compressed names ("fn=(12)")
// resolve to their first spelling.
func ReadCosts(name string) (Costs, error) {
	c := Costs{Self: map[string]uint64{}, Calls: map[string]map[string]uint64{}}
	f, err := os.Open(name)
	if err != nil {
		return c, fmt.Errorf("callgrind output: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	names := map[string]string{} // "(12)" → name
	fn, callee, call := "", "", false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		switch ch := line[0]; {
		case ch >= '0' && ch <= '9' || ch == '+' || ch == '-' || ch == '*':
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
				return c, fmt.Errorf("callgrind output %s:%d: %q: %w", name, n, line, err)
			}
			c.Self[fn] += v
		case strings.HasPrefix(line, "fn="):
			fn = resolve(names, line[len("fn="):])
		case strings.HasPrefix(line, "cfn="):
			callee = resolve(names, line[len("cfn="):])
		case strings.HasPrefix(line, "calls="):
			call = true
			count, _, _ := strings.Cut(line[len("calls="):], " ")
			v, err := strconv.ParseUint(count, 10, 64)
			if err != nil {
				return c, fmt.Errorf("callgrind output %s:%d: %q: %w", name, n, line, err)
			}
			to, from := Unrecursed(callee), Unrecursed(fn)
			if c.Calls[to] == nil {
				c.Calls[to] = map[string]uint64{}
			}
			c.Calls[to][from] += v
		}
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("callgrind output %s: %w", name, err)
	}
	return c, nil
}

// Within is the instructions spent in the functions that in selects: their own,
// and a share of the own instructions of each of helpers, functions they call that
// others call too (a compare): the share of the helper's calls that came from the
// selection, directly or through the helpers before it (list them callers first:
// bytes.Compare before what it calls). It assumes a helper's calls cost alike,
// whoever makes them.
func (c Costs) Within(in func(fn string) bool, helpers []string) float64 {
	var sum float64
	for fn, v := range c.Self {
		if in(fn) {
			sum += float64(v)
		}
	}
	share := map[string]float64{} // of each helper's calls, from the selection
	for _, h := range helpers {
		var from, all float64
		for caller, n := range c.Calls[h] {
			all += float64(n)
			switch {
			case in(caller):
				from += float64(n)
			default:
				from += float64(n) * share[caller]
			}
		}
		if all == 0 {
			continue
		}
		share[h] = from / all
		var self uint64
		for fn, v := range c.Self {
			if Unrecursed(fn) == h {
				self += v
			}
		}
		sum += float64(self) * share[h]
	}
	return sum
}

// Unrecursed is a function's name without the recursion depth callgrind appends
// ("f'2" is f called from within f).
func Unrecursed(fn string) string {
	i := strings.LastIndexByte(fn, '\'')
	if i < 0 || i == len(fn)-1 {
		return fn
	}
	if _, err := strconv.Atoi(fn[i+1:]); err != nil {
		return fn
	}
	return fn[:i]
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

package ci

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// TestPRBenchmarkConcurrency evaluates pr-benchmark.yml's concurrency group and its
// job's `if` for the events that start it: exactly the runs that benchmark share
// the PR's group (cancel-in-progress lets a newer push cancel an older run); any
// other run, such as another label added to a labelled PR, is alone in its group,
// so it cannot cancel a benchmark in progress.
func TestPRBenchmarkConcurrency(t *testing.T) {
	data, err := os.ReadFile("../.github/workflows/pr-benchmark.yml")
	if err != nil {
		t.Fatal(err)
	}
	w, errs := actionlint.Parse(data)
	if len(errs) > 0 {
		t.Fatalf("pr-benchmark.yml: %v", errs[0])
	}
	if w.Concurrency == nil || w.Concurrency.Group == nil || w.Concurrency.CancelInProgress == nil || !w.Concurrency.CancelInProgress.Value {
		t.Fatal("pr-benchmark.yml: want a workflow concurrency group with cancel-in-progress: true")
	}
	job := w.Jobs["compare"]
	if job == nil || job.If == nil {
		t.Fatal("pr-benchmark.yml: want the compare job with its `if`")
	}
	if job.Concurrency != nil {
		t.Error("pr-benchmark.yml: the compare job has its own concurrency group; this test checks the workflow's")
	}
	const shared = "pr-benchmark-7"
	for _, tc := range []struct {
		name, action, label string
		labels              []string
		runs                bool
	}{
		{"the benchmark label added", "labeled", "benchmark", []string{"benchmark"}, true},
		{"another label on a labelled PR", "labeled", "docs", []string{"benchmark", "docs"}, false},
		{"another label on an unlabelled PR", "labeled", "docs", []string{"docs"}, false},
		{"a push to a labelled PR", "synchronize", "", []string{"docs", "benchmark"}, true},
		{"a push to an unlabelled PR", "synchronize", "", nil, false},
		{"a labelled PR reopened", "reopened", "", []string{"benchmark"}, true},
		{"an unlabelled PR reopened", "reopened", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels := []any{}
			for _, l := range tc.labels {
				labels = append(labels, map[string]any{"name": l})
			}
			event := map[string]any{"action": tc.action, "pull_request": map[string]any{"number": 7.0, "labels": labels}}
			if tc.label != "" {
				event["label"] = map[string]any{"name": tc.label}
			}
			ctx := map[string]any{"github": map[string]any{"event": event, "run_id": "4242"}}
			cond := strings.TrimSpace(job.If.Value)
			cond = strings.TrimSuffix(strings.TrimPrefix(cond, "${{"), "}}")
			runs, err := evalExpr(cond, ctx)
			if err != nil {
				t.Fatalf("if: %v", err)
			}
			group, err := evalTemplate(w.Concurrency.Group.Value, ctx)
			if err != nil {
				t.Fatalf("concurrency group: %v", err)
			}
			if truthy(runs) != tc.runs {
				t.Errorf("the job runs: %v, want %v", truthy(runs), tc.runs)
			}
			if (group == shared) != tc.runs {
				t.Errorf("group %q: want %q exactly when the job benchmarks", group, shared)
			}
			if !tc.runs && !strings.Contains(group, "4242") {
				t.Errorf("group %q: want the run's own group (its run id)", group)
			}
		})
	}
}

// evalTemplate evaluates a string with ${{ }} placeholders as GitHub does.
func evalTemplate(s string, ctx map[string]any) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("%q: unterminated ${{", s)
		}
		v, err := evalExpr(s[i+3:i+j], ctx)
		if err != nil {
			return "", err
		}
		b.WriteString(toString(v))
		s = s[i+j+2:]
	}
}

// evalExpr parses an expression with actionlint and evaluates the subset of the
// language the workflows use: properties, .*, literals, !, ==, !=, && and ||,
// contains and format.
func evalExpr(src string, ctx map[string]any) (any, error) {
	n, perr := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(src + "}}"))
	if perr != nil {
		return nil, fmt.Errorf("%q: %s", src, perr.Message)
	}
	return eval(n, ctx)
}

// spread is the result of a .* dereference: a property of it is taken of each element.
type spread []any

func eval(n actionlint.ExprNode, ctx map[string]any) (any, error) {
	switch n := n.(type) {
	case *actionlint.VariableNode:
		return ctx[n.Name], nil
	case *actionlint.NullNode:
		return nil, nil
	case *actionlint.BoolNode:
		return n.Value, nil
	case *actionlint.IntNode:
		return float64(n.Value), nil
	case *actionlint.FloatNode:
		return n.Value, nil
	case *actionlint.StringNode:
		return n.Value, nil
	case *actionlint.ObjectDerefNode:
		r, err := eval(n.Receiver, ctx)
		if err != nil {
			return nil, err
		}
		if s, ok := r.(spread); ok {
			var out spread
			for _, e := range s {
				if m, ok := e.(map[string]any); ok {
					out = append(out, m[n.Property])
				}
			}
			return out, nil
		}
		m, _ := r.(map[string]any)
		return m[n.Property], nil
	case *actionlint.ArrayDerefNode:
		r, err := eval(n.Receiver, ctx)
		if err != nil {
			return nil, err
		}
		a, _ := r.([]any)
		return spread(a), nil
	case *actionlint.NotOpNode:
		v, err := eval(n.Operand, ctx)
		return !truthy(v), err
	case *actionlint.CompareOpNode:
		l, err := eval(n.Left, ctx)
		if err != nil {
			return nil, err
		}
		r, err := eval(n.Right, ctx)
		if err != nil {
			return nil, err
		}
		switch n.Kind {
		case actionlint.CompareOpNodeKindEq:
			return equal(l, r), nil
		case actionlint.CompareOpNodeKindNotEq:
			return !equal(l, r), nil
		}
		return nil, fmt.Errorf("comparison %s is not supported by this test", n.Kind)
	case *actionlint.LogicalOpNode:
		l, err := eval(n.Left, ctx)
		if err != nil {
			return nil, err
		}
		// Like GitHub's: && and || yield an operand, not a boolean.
		if truthy(l) == (n.Kind == actionlint.LogicalOpNodeKindOr) {
			return l, nil
		}
		return eval(n.Right, ctx)
	case *actionlint.FuncCallNode:
		var args []any
		for _, a := range n.Args {
			v, err := eval(a, ctx)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		switch strings.ToLower(n.Callee) {
		case "contains":
			if len(args) == 2 {
				if s, ok := args[0].(spread); ok {
					for _, e := range s {
						if equal(e, args[1]) {
							return true, nil
						}
					}
					return false, nil
				}
				return strings.Contains(strings.ToLower(toString(args[0])), strings.ToLower(toString(args[1]))), nil
			}
		case "format":
			if len(args) >= 1 {
				s := toString(args[0])
				for i, a := range args[1:] {
					s = strings.ReplaceAll(s, "{"+strconv.Itoa(i)+"}", toString(a))
				}
				return s, nil
			}
		}
		return nil, fmt.Errorf("function %s/%d is not supported by this test", n.Callee, len(args))
	}
	return nil, fmt.Errorf("expression node %T is not supported by this test", n)
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	}
	return true
}

// equal compares as GitHub does for the types used here: strings without case.
func equal(a, b any) bool {
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return strings.EqualFold(as, bs)
		}
	}
	switch a.(type) {
	case nil, bool, float64:
		return a == b // b of another type is simply unequal
	}
	return false
}

func toString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(v)
}

// cel-eval evaluates the validations of ValidatingAdmissionPolicies with the CEL environment of
// k8s.io/apiserver (the libraries and version the API server's admission uses), against objects.
// Input (stdin, JSON): {"policies": [{"name", "matchConditions": [{"name", "expression"}],
// "variables": [{"name", "expression"}], "validations": [{"expression", "message"}]}],
// "objects": [object, ...]}. Output (stdout, JSON): one verdict per object and policy that fails,
// {"object": index, "policy": name, "message": message}; a compile error exits 1.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

type validation struct {
	Expression string `json:"expression"`
	Message    string `json:"message"`
}

type named struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

type policy struct {
	Name            string       `json:"name"`
	MatchConditions []named      `json:"matchConditions"`
	Variables       []named      `json:"variables"`
	Validations     []validation `json:"validations"`
}

type request struct {
	Policies []policy         `json:"policies"`
	Objects  []map[string]any `json:"objects"`
}

type verdict struct {
	Object  int    `json:"object"`
	Policy  string `json:"policy"`
	Message string `json:"message"`
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "cel-eval: bad input:", err)
		os.Exit(2)
	}
	base := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	set, err := base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        []cel.EnvOption{cel.Variable("object", cel.DynType), cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType))},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cel-eval:", err)
		os.Exit(1)
	}
	env, err := set.Env(environment.NewExpressions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cel-eval:", err)
		os.Exit(1)
	}
	out := []verdict{}
	for _, p := range req.Policies {
		for i, obj := range req.Objects {
			vars := map[string]any{}
			act := map[string]any{"object": obj, "variables": vars}
			matched := true
			for _, m := range p.MatchConditions {
				if val, err := eval(env, m.Expression, act); err != nil || val != true {
					matched = false
				}
			}
			if !matched {
				continue
			}
			for _, v := range p.Variables {
				val, err := eval(env, v.Expression, act)
				if err == nil {
					vars[v.Name] = val
				}
			}
			for _, v := range p.Validations {
				val, err := eval(env, v.Expression, act)
				if err != nil {
					// an evaluation error fails the validation, as failurePolicy: Fail does
					out = append(out, verdict{i, p.Name, "error: " + err.Error()})
				} else if val != true {
					out = append(out, verdict{i, p.Name, v.Message})
				}
			}
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}

// eval compiles and evaluates one expression; a compile error ends the run (exit 1).
func eval(env *cel.Env, expr string, act map[string]any) (any, error) {
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		fmt.Fprintf(os.Stderr, "cel-eval: %q: %v\n", expr, issues.Err())
		os.Exit(1)
	}
	prg, err := env.Program(ast)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cel-eval: %q: %v\n", expr, err)
		os.Exit(1)
	}
	val, _, err := prg.Eval(act)
	if err != nil {
		return nil, err
	}
	return val.Value(), nil
}

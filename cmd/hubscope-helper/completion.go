package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// cmdCompletion prints a bash or zsh completion script: the commands and each command's
// flags, read from the help texts themselves, so the script cannot drift from the program.
//
//	source <(hubscope-helper completion bash)
//	hubscope-helper completion zsh > "${fpath[1]}/_hubscope-helper"
func cmdCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, "usage: hubscope-helper completion bash|zsh\n\nprints a completion script: source <(hubscope-helper completion bash)")
		return nil
	}
	if len(args) != 1 || (args[0] != "bash" && args[0] != "zsh") {
		fmt.Fprintln(stderr, "usage: hubscope-helper completion bash|zsh")
		return errUsage
	}
	cmds := map[string][]string{}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(usage, -1) {
		name := m[1]
		names = append(names, name)
		var out bytes.Buffer
		realMain(ctx, []string{name, "-h"}, &out, io.Discard)
		for _, f := range regexp.MustCompile(`(?m)^  (--[a-z][a-z0-9-]*)`).FindAllStringSubmatch(out.String(), -1) {
			cmds[name] = append(cmds[name], f[1])
		}
	}
	slices.Sort(names)
	if args[0] == "bash" {
		fmt.Fprintf(stdout, "# bash completion for hubscope-helper (hubscope-helper completion bash)\n_hubscope_helper() {\n")
		fmt.Fprintf(stdout, "  local cur=${COMP_WORDS[COMP_CWORD]}\n  if [ \"$COMP_CWORD\" -eq 1 ]; then\n")
		fmt.Fprintf(stdout, "    COMPREPLY=($(compgen -W %q -- \"$cur\")); return\n  fi\n", strings.Join(names, " "))
		fmt.Fprintf(stdout, "  case \"$cur\" in\n  -*)\n    case \"${COMP_WORDS[1]}\" in\n")
		for _, n := range names {
			fmt.Fprintf(stdout, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\"));;\n", n, strings.Join(cmds[n], " "))
		}
		fmt.Fprintf(stdout, "    esac;;\n  *) COMPREPLY=($(compgen -f -- \"$cur\"));;\n  esac\n}\ncomplete -o filenames -F _hubscope_helper hubscope-helper\n")
		return nil
	}
	fmt.Fprintf(stdout, "#compdef hubscope-helper\n# zsh completion for hubscope-helper (hubscope-helper completion zsh)\n")
	fmt.Fprintf(stdout, "if (( CURRENT == 2 )); then\n  compadd -- %s\nelse\n  case $words[2] in\n", strings.Join(names, " "))
	for _, n := range names {
		fmt.Fprintf(stdout, "  %s) _arguments '*:file:_files' %s;;\n", n, zshFlags(cmds[n]))
	}
	fmt.Fprintf(stdout, "  esac\nfi\n")
	return nil
}

// zshFlags quotes each flag as an _arguments option spec.
func zshFlags(flags []string) string {
	q := make([]string, len(flags))
	for i, f := range flags {
		q[i] = "'" + f + "'"
	}
	return strings.Join(q, " ")
}

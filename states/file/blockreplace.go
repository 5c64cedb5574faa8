package file

import (
	"context"
	"errors"
	"fmt"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	filemod "github.com/brinehq/brine/modules/file"
	"github.com/brinehq/brine/state"
)

// blockreplaceFunc declares file.blockreplace: the lines between two
// markers of a file kept as content says (Salt's states/file.py
// blockreplace, which the file.blockreplace execution function does the
// work of).
func (s *states) blockreplaceFunc() function.Func {
	anyp := func(n string, def any) function.Param {
		return function.Param{Name: n, Kind: function.Any, Default: def}
	}
	boolp := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	return function.Func{
		Name: "file.blockreplace", Doc: "Keep the block of lines between marker_start and marker_end as content says " +
			"(added at the start or end, or before/after a matching line, when missing and asked to).",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true},
			anyp("marker_start", "#-- start managed zone --"), anyp("marker_end", "#-- end managed zone --"),
			anyp("source", nil), anyp("source_hash", nil), {Name: "template", Kind: function.String, Default: "jinja"},
			anyp("sources", nil), anyp("source_hashes", nil), anyp("defaults", nil), anyp("context", nil),
			anyp("content", ""), boolp("append_if_not_found", false), boolp("prepend_if_not_found", false),
			anyp("backup", ".bak"), boolp("show_changes", true), anyp("append_newline", nil),
			anyp("insert_before_match", nil), anyp("insert_after_match", nil)},
		Run: func(ctx context.Context, in *function.Input) (any, error) { return s.blockreplaceState(ctx, in), nil },
	}
}

func (s *states) blockreplaceState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.blockreplace")
	}
	if in.Value("source") != nil && in.Value("sources") != nil {
		return state.Failed(name, "source and sources are mutually exclusive")
	}
	if ok, msg := checkFile(name); !ok {
		return state.Failed(name, "%s", msg)
	}
	content := py.Str(in.Value("content"))
	// Accumulators aimed at this file (file.accumulated) are lines of
	// the block, after content, as Salt adds them.
	for _, line := range s.accumulatedLines(ctx, name) {
		if content == "" {
			content = line
		} else {
			content += "\n" + line
		}
	}
	var srcs []any
	if v := in.Value("source"); v != nil {
		srcs = []any{v}
	} else if l, ok := in.Value("sources").([]any); ok {
		srcs = l
	}
	for _, src := range srcs {
		// Salt's _get_template_texts says no more than this, whether the
		// file is missing or does not render, and names the result after
		// the source.
		text, msg := s.sourceText(ctx, src, in)
		if msg != "" {
			return state.Failed(py.Str(src), "Failed to load template file %s", py.Str(src))
		}
		content += text
	}
	o := filemod.BlockOpts{MarkerStart: py.Str(in.Value("marker_start")), MarkerEnd: py.Str(in.Value("marker_end")),
		Content: content, AppendIfNotFound: in.Bool("append_if_not_found"), PrependIfNotFound: in.Bool("prepend_if_not_found"),
		Backup: filemod.BackupSuffix(in.Value("backup")), DryRun: test, ShowChanges: in.Bool("show_changes")}
	err := o.ReadArgs(in)
	var out any
	if err == nil {
		out, err = filemod.Blockreplace(name, o)
	}
	if err != nil {
		var ee filemod.EditError
		if !errors.As(err, &ee) {
			err = fmt.Errorf("%s: %w", name, err)
		}
		return state.Failed(name, "Encountered error managing block: %v. See the log for details.", err)
	}
	return edited(name, out, test, "Changes would be made")
}

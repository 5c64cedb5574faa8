package output

import (
	"strings"
	"testing"
)

// A state return in seed 003's shape, printed as Salt's highstate
// outputter prints it.
func TestHighstate(t *testing.T) {
	ret := decoded(t, `{
 "pkg_|-install_apache_|-apache2_|-installed": {"__run_num__": 0, "__sls__": "apache", "__id__": "install_apache", "changes": {},
   "comment": "All specified packages are already installed", "duration": 12.5, "name": "apache2", "result": true, "start_time": "10:00:00.000001"},
 "git_|-deploy_|-https://example.com/app.git_|-latest": {"__run_num__": 1, "__id__": "deploy", "changes": {"revision": {"new": "abc", "old": "def"}},
   "comment": "Repository updated\nto abc", "duration": 1000.25, "name": "https://example.com/app.git", "result": true, "start_time": "10:00:01.000002"},
 "event_|-notify_of_fail_|-apptest/failed_|-send": {"__run_num__": 2, "__id__": "notify_of_fail", "__state_ran__": false, "changes": {},
   "comment": "State was not run because onfail req did not change", "duration": 0.01, "name": "apptest/failed", "result": true, "start_time": "10:00:02.000003"},
 "service_|-enable_apache_|-apache2_|-running": {"__run_num__": 3, "__id__": "enable_apache", "changes": {}, "comment": "apache2 failed to start",
   "duration": 3, "name": "apache2", "result": false, "start_time": "10:00:03.000004"}
}`)
	for _, tc := range []struct {
		o    Options
		want []string // lines, in order
		not  []string
	}{
		{Options{StateOutput: "terse"}, []string{
			"  Name: apache2 - Function: pkg.installed - Result: Clean Started: - 10:00:00.000001 Duration: 12.5 ms",
			"  Name: https://example.com/app.git - Function: git.latest - Result: Changed Started: - 10:00:01.000002 Duration: 1000.25 ms",
			"  Name: apache2 - Function: service.running - Result: Failed Started: - 10:00:03.000004 Duration: 3 ms",
			"Succeeded: 3 (changed=1)"}, []string{"Comment:"}},
		{Options{StateOutput: "terse_id"}, []string{"  ID: install_apache - Function: pkg.installed - Result: Clean"}, nil},
		{Options{StateOutput: "mixed"}, []string{"  Name: https://example.com/app.git - Function: git.latest - Result: Changed",
			"     Comment: apache2 failed to start"}, []string{"Comment: Repository updated"}},
		{Options{StateOutput: "changes"}, []string{"  Name: apache2 - Function: pkg.installed - Result: Clean",
			"     Comment: Repository updated", "     Comment: apache2 failed to start"}, nil},
		{Options{StateQuiet: true}, []string{"          ID: deploy", "          ID: enable_apache", "Total states run:     4"},
			[]string{"install_apache", "notify_of_fail"}},
	} {
		var r Returns
		r.Add("web01", ret)
		var b strings.Builder
		if err := Write(&b, "highstate", r, tc.o); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		at := 0
		for _, w := range tc.want {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Errorf("%+v: no %q (in order) in\n%s", tc.o, w, got)
				break
			}
			at += i + len(w)
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%+v: %q shown in\n%s", tc.o, n, got)
			}
		}
	}
	var r Returns
	r.Add("web01", ret)
	var b strings.Builder
	if err := Write(&b, "highstate", r, Options{}); err != nil {
		t.Fatal(err)
	}
	want := `web01:
----------
          ID: install_apache
    Function: pkg.installed
        Name: apache2
      Result: True
     Comment: All specified packages are already installed
     Started: 10:00:00.000001
    Duration: 12.5 ms
     Changes:   
----------
          ID: deploy
    Function: git.latest
        Name: https://example.com/app.git
      Result: True
     Comment: Repository updated
              to abc
     Started: 10:00:01.000002
    Duration: 1000.25 ms
     Changes:   
              ----------
              revision:
                  ----------
                  new:
                      abc
                  old:
                      def
----------
          ID: notify_of_fail
    Function: event.send
        Name: apptest/failed
      Result: True
     Comment: State was not run because onfail req did not change
     Started: 10:00:02.000003
    Duration: 0.01 ms
     Changes:   
----------
          ID: enable_apache
    Function: service.running
        Name: apache2
      Result: False
     Comment: apache2 failed to start
     Started: 10:00:03.000004
    Duration: 3 ms
     Changes:   

Summary for web01
------------
Succeeded: 3 (changed=1)
Failed:    1
------------
Total states run:     4
Total run time:   1.016 s
`
	if b.String() != want {
		t.Errorf("highstate:\n%s\nwant\n%s", b.String(), want)
	}
	// What is not a state return prints as Salt prints it.
	b.Reset()
	var e Returns
	e.Add("web01", decoded(t, `["Rendering SLS 'base:apache' failed: line 3"]`))
	e.Add("web02", decoded(t, `"'state.apply' is not available."`))
	if err := Write(&b, "highstate", e, Options{}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "web01:\n    Data failed to compile:\n----------\n    Rendering SLS 'base:apache' failed: line 3\nweb02:\n    'state.apply' is not available.\n" {
		t.Errorf("not state returns:\n%q", b.String())
	}
}

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

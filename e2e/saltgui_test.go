package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// saltGUIArchive is SaltGUI's release tree among the peers beside the
// repository (../shared/peers).
const saltGUIArchive = "saltgui-1.35-7dfdccb.tar.gz"

// chromiumPath is Debian's chromium, the browser the test drives (make
// deps installs it).
const chromiumPath = "/usr/bin/chromium"

// saltGUISite is SaltGUI's static site (index.html and static/):
// SALTGUI_DIR, or the peers' archive unpacked into a temporary directory.
// Without either the test fails, saying how to get one.
func saltGUISite(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("SALTGUI_DIR"); d != "" {
		for _, sub := range []string{d, filepath.Join(d, "saltgui")} {
			if _, err := os.Stat(filepath.Join(sub, "static", "scripts", "Api.js")); err == nil {
				return sub
			}
		}
		t.Fatalf("SALTGUI_DIR=%s holds no SaltGUI site (index.html and static/scripts/Api.js, or saltgui/ with them)", d)
	}
	archive, err := filepath.Abs(filepath.Join("..", "..", "shared", "peers", saltGUIArchive))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(archive); err != nil {
		t.Fatalf("no SaltGUI: set SALTGUI_DIR to SaltGUI's saltgui/ directory (index.html and static/), "+
			"or put %s at ../shared/peers/ beside the repository: %v", saltGUIArchive, err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "xzf", archive, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v: %s", archive, err, out)
	}
	return filepath.Join(dir, "saltgui", "saltgui")
}

// fetchLog wraps the page's fetch so that the test can show, when a step
// fails, each salt-api request SaltGUI made and what came back.
const fetchLog = `(() => {
  window.__brine = [];
  const orig = window.fetch;
  window.fetch = (url, opts) => {
    const e = {method: (opts && opts.method) || "GET", url: String(url), body: (opts && opts.body) || ""};
    window.__brine.push(e);
    return orig(url, opts).then((r) => {
      e.status = r.status;
      r.clone().text().then((t) => { e.reply = t.length > 600 ? t.slice(0, 600) + "..." : t; });
      return r;
    }, (err) => { e.status = "error: " + err; throw err; });
  };
  const OrigES = window.EventSource;
  window.EventSource = function (url, init) {
    const e = {method: "EventSource", url: String(url), body: "", status: "connecting", reply: ""};
    window.__brine.push(e);
    const es = new OrigES(url, init);
    es.addEventListener("open", () => { e.status = "open"; });
    es.addEventListener("error", () => { e.status = "error (readyState " + es.readyState + ")"; });
    es.addEventListener("message", (m) => { e.reply = (e.reply + " " + (JSON.parse(m.data).tag || "")).slice(-600); });
    return es;
  };
})();`

// guiBrowser is a headless chromium on one SaltGUI tab.
type guiBrowser struct {
	t   *testing.T
	ctx context.Context
}

// js evaluates expr on the page; a failure fails the test.
func (b *guiBrowser) js(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("evaluating %.80q: %v", expr, err)
	}
	return v
}

// wait polls expr (a JavaScript expression giving a string) until it is
// not empty and returns it; after d it reports what as a failure, with
// the page's text and SaltGUI's salt-api exchanges, and returns "".
func (b *guiBrowser) wait(what string, d time.Duration, expr string) string {
	b.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if v := b.js("(() => { try { return String(" + expr + " || '') } catch (e) { return '' } })()"); v != "" {
			return v
		}
		if time.Now().After(deadline) {
			b.t.Errorf("SaltGUI: %s: not within %v\npage (%s):\n%s\nsalt-api exchanges:\n%s", what, d,
				b.js("location.href"), b.js("document.body ? document.body.innerText.slice(0, 3000) : ''"), b.exchanges())
			return ""
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// exchanges is SaltGUI's requests to salt-api so far, one a line.
func (b *guiBrowser) exchanges() string {
	return b.js(`(window.__brine || []).map((e) => e.method + " " + e.url + " " + e.body + " -> " + e.status + " " + (e.reply || "")).join("\n")`)
}

// goTo opens a page of SaltGUI by its top menu item, as a user clicks it.
func (b *guiBrowser) goTo(name string) {
	b.t.Helper()
	b.js(`document.getElementById("button-` + name + `1").click(); ""`)
}

// screenshot saves the viewport to docs/images/saltgui-NAME.png when
// BRINE_SCREENSHOTS=1, so that a CI run does not rewrite the docs.
func (b *guiBrowser) screenshot(name string) {
	b.t.Helper()
	if os.Getenv("BRINE_SCREENSHOTS") != "1" {
		return
	}
	// The page left fades out for 500 ms (SaltGUI's Router._hidePage).
	b.wait("the previous page faded out before the "+name+" screenshot", 5*time.Second,
		`[...document.querySelectorAll(".route")].every((p) => p.classList.contains("current") || p.style.display === "none" || getComputedStyle(p).opacity === "0") && "ok"`)
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	dir := filepath.Join("..", "docs", "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "saltgui-"+name+".png"), png, 0o644); err != nil {
		b.t.Error(err)
	}
}

// newGUIBrowser starts headless chromium (no sandbox as root, its own
// profile) with SaltGUI's fetches recorded.
func newGUIBrowser(t *testing.T) *guiBrowser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("this test drives Debian's chromium: install the package chromium (make deps): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); acancel() })
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fetchLog}); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	return &guiBrowser{t: t, ctx: ctx}
}

// navigate loads url in the tab.
func (b *guiBrowser) navigate(url string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		b.t.Fatalf("opening %s: %v", url, err)
	}
}

// TestSaltGUI runs SaltGUI, the web console Salt shops put on salt-api,
// against brine's rest_cherrypy in headless chromium, set up as SaltGUI's
// guide says (app, static and static_path; netapi_enable_clients; a file
// eauth user with '.*', @runner, @wheel and @jobs): log in, the minions
// with their OS, test.ping from the command box, the pending key accepted
// from the keys page, the job on the jobs page, an event on the events
// page.
func TestSaltGUI(t *testing.T) {
	start := time.Now()
	site := saltGUISite(t)
	m := newTestMaster(t)
	writeFile(t, filepath.Join(m.confDir, "master.d", "saltgui.users"), "gui:gui-pass-0123\n")
	// Only web1 and web2 are accepted on sight: db1 stays pending for
	// the keys page.
	writeFile(t, filepath.Join(m.confDir, "autosign"), "web1\nweb2\n")
	port := freePort(t)
	writeFile(t, filepath.Join(m.confDir, "master.d", "saltapi.conf"), fmt.Sprintf(`autosign_file: %s
rest_cherrypy:
  port: %d
  host: 127.0.0.1
  disable_ssl: true
  app: %s
  static: %s
  static_path: /static
netapi_enable_clients: [local, local_async, runner, runner_async, wheel, wheel_async]
external_auth:
  file:
    ^filename: %s
    ^filetype: text
    gui: ['.*', '@runner', '@wheel', '@jobs']
`, filepath.Join(m.confDir, "autosign"), port, filepath.Join(site, "index.html"), filepath.Join(site, "static"),
		filepath.Join(m.confDir, "master.d", "saltgui.users")))
	m.start()
	web1 := newTestAgent(t, m, "web1", "127.0.0.1", "").start()
	web2 := newTestAgent(t, m, "web2", "127.0.0.1", "").start()
	db1 := newTestAgent(t, m, "db1", "127.0.0.1", "").start()
	web1.waitLog(logAccepted, 1)
	web2.waitLog(logAccepted, 1)
	db1.waitLog(logWaiting, 1)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, m, "salt-api", base+"/")
	osName := agentOS(t, m)
	setup := time.Since(start)

	b := newGUIBrowser(t)
	// SaltGUI's guide: browse to the API's address; rest_cherrypy serves
	// the app for any page a browser asks for as text/html.
	b.navigate(base + "/")
	if b.wait("the login form at "+base+"/ (rest_cherrypy serves app to a browser's text/html request for any path but static_path)",
		3*time.Second, `document.getElementById("username") && "ok"`) == "" {
		b.navigate(base + "/app")
	}
	b.wait("the login form at /app", 10*time.Second, `document.getElementById("username") && "ok"`)

	// Log in through the form with the file eauth.
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("username"), "gui"),
		chromedp.SendKeys(chromedp.ID("password"), "gui-pass-0123"),
		chromedp.SetValue(chromedp.CSS("#login-panel select"), "file"),
		chromedp.Click(chromedp.ID("login-button")),
	)
	cancel()
	if err != nil {
		t.Fatalf("filling in SaltGUI's login form: %v", err)
	}
	if b.wait("logged in (the minions page after the login)", 15*time.Second,
		`location.hash === "#minions" && document.getElementById("minions-panel") && "ok"`) == "" {
		t.FailNow()
	}

	// The minions page: both accepted agents with their OS grain.
	for _, id := range []string{"web1", "web2"} {
		row := fmt.Sprintf(`document.querySelector("#minions-panel #%s")`, guiID(id))
		got := b.wait(id+"'s row on the minions page with its OS", 15*time.Second,
			row+` && !/loading/.test(`+row+`.querySelector(".os").innerText) && `+row+`.querySelector(".os").innerText`)
		if got != "" && !strings.Contains(got, osName) {
			t.Errorf("minions page: %s's OS is %q, want its grain os %q", id, got, osName)
		}
	}
	b.screenshot("minions")

	// test.ping on '*' from the command box: each agent's true.
	b.js(`document.getElementById("button-manual-run").dispatchEvent(new MouseEvent("click", {bubbles: true})); ""`)
	ctx, cancel = context.WithTimeout(b.ctx, 10*time.Second)
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID("command")),
		chromedp.SendKeys(chromedp.ID("target"), "*"),
		chromedp.SendKeys(chromedp.ID("command"), "test.ping"),
		chromedp.Click(chromedp.ID("run-command")),
	)
	cancel()
	if err != nil {
		t.Errorf("running test.ping from the command box: %v", err)
	}
	out := b.wait("test.ping's output in the command box", 15*time.Second,
		`(() => { const t = document.getElementById("popup-output").innerText; return /web1/.test(t) && /web2/.test(t) && !/loading/.test(t) ? t : "" })()`)
	for _, id := range []string{"web1", "web2"} {
		if out != "" && !regexp.MustCompile(`(?m)^`+id+`:\s*true$`).MatchString(out) {
			t.Errorf("command box: no %s: true in test.ping's output:\n%s", id, out)
		}
	}
	b.js(`document.getElementById("cmd-close-button").click(); ""`)

	// The keys page: db1 pending, accepted through its row's menu and
	// the command box it fills in.
	b.goTo("keys")
	db1Row := fmt.Sprintf(`document.querySelector("#keys-panel #%s")`, guiID("db1"))
	if b.wait("db1 as an unaccepted key on the keys page", 15*time.Second,
		db1Row+` && /unaccepted/.test(`+db1Row+`.innerText) && "ok"`) != "" {
		b.screenshot("keys")
		if msg := b.js(`(() => {
  const row = ` + db1Row + `;
  const menu = row.querySelector(".menu-dropdown").parentElement;
  menu.dispatchEvent(new MouseEvent("mouseenter"));
  const item = [...menu.querySelectorAll(".menu-dropdown-content .run-command-button")].find((e) => /^Accept\skey/.test(e.innerText));
  if (!item) return "no Accept key item in db1's menu: " + menu.innerText;
  item.click();
  return "";
})()`); msg != "" {
			t.Errorf("keys page: %s", msg)
		}
		ctx, cancel = context.WithTimeout(b.ctx, 10*time.Second)
		err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("run-command")), chromedp.Click(chromedp.ID("run-command")))
		cancel()
		if err != nil {
			t.Errorf("accepting db1 from the keys page: %v", err)
		}
		b.wait("wheel.key.accept's output in the command box", 15*time.Second,
			`(() => { const t = document.getElementById("popup-output").innerText; return /db1/.test(t) && !/loading/.test(t) ? t : "" })()`)
		b.js(`document.getElementById("cmd-close-button").click(); ""`)
	}

	// The jobs page: the test.ping job.
	b.goTo("jobs")
	if b.wait("the test.ping job on the jobs page", 15*time.Second,
		`(() => { const p = document.getElementById("jobs-panel"); return p && /test\.ping/.test(p.innerText) ? "ok" : "" })()`) != "" {
		b.screenshot("jobs")
	}

	// SaltGUI's Accept key went through: brine's key list has db1
	// accepted (checked after the jobs page, whose screenshot would
	// otherwise show brine key -L's own key.list_all job).
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(keyList(t, m)["minions"], "db1") {
		if time.Now().After(deadline) {
			t.Errorf("db1 not accepted after SaltGUI's Accept key: brine key -L --json: %v\nsalt-api exchanges:\n%s", keyList(t, m), b.exchanges())
			break
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The events page, playing: an event sent with brine event send.
	b.goTo("events")
	b.js(`(() => {
  const play = [...document.querySelectorAll("#events-panel .small-button-for-click")].find((e) => e.innerText === "\u2BC8" && e.style.display !== "none");
  if (play) play.click();
  return "";
})()`)
	if _, errs, code := m.run(nil, "event", "send", "myco/gui/test", "from=saltgui-test"); code != 0 {
		t.Fatalf("brine event send: exit %d: %s", code, errs)
	}
	b.wait("myco/gui/test on the events page", 15*time.Second,
		`(() => { const p = document.getElementById("events-panel"); return p && /myco\/gui\/test/.test(p.innerText) ? "ok" : "" })()`)
	t.Logf("setup (master, 3 agents, salt-api) %v, browser steps %v", setup.Round(time.Millisecond), time.Since(start.Add(setup)).Round(time.Millisecond))
}

// guiID is SaltGUI's element id for a minion (Utils.getIdFromMinionId:
// "m" and the id in URL-safe base64 without padding).
func guiID(id string) string {
	return "m" + base64.RawURLEncoding.EncodeToString([]byte(id))
}

// agentOS is web1's os grain, as the master's grains.item gets it.
func agentOS(t *testing.T, m *testMaster) string {
	t.Helper()
	out, errs, code := m.run(nil, "exec", "web1", "grains.item", "os", "--json")
	var r map[string]map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("brine exec web1 grains.item os --json: exit %d: %s%s", code, out, errs)
	}
	os, _ := r["web1"]["os"].(string)
	if os == "" {
		t.Fatalf("web1 has no os grain: %s", out)
	}
	return os
}
